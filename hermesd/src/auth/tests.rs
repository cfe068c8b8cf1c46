use super::*;

const AUTH_JSON: &str = r#"{
  "version": 1,
  "providers": {},
  "credential_pool": {
    "openrouter": [
      {"id": "aaaaaa", "label": "primary", "auth_type": "api_key", "priority": 0, "source": "manual", "access_token": "sk-1"},
      {"id": "bbbbbb", "label": "second", "auth_type": "api_key", "priority": 1, "source": "manual", "access_token": "sk-2"}
    ]
  }
}"#;

fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("auth.json"), AUTH_JSON).unwrap();
    home
}

fn ids(credentials: &Credentials, pool: &str) -> Vec<String> {
    credentials
        .list()
        .0
        .into_iter()
        .filter(|v| v.pool == pool)
        .map(|v| v.id)
        .collect()
}

#[test]
fn file_rows_then_own_keys_then_key_variables() {
    let home = home();
    let env = Env::from_pairs([
        ("OPENROUTER_API_KEY", "sk-env"),
        ("DEEPSEEK_API_KEY", "sk-d"),
    ]);
    let credentials = Credentials::load(home.path(), &env, &[]);
    credentials
        .add("OpenRouter", "mine", Some("sk-own"), None)
        .unwrap();
    assert_eq!(
        ids(&credentials, "openrouter")[..2],
        ["aaaaaa".to_string(), "bbbbbb".to_string()]
    );
    let all = ids(&credentials, "openrouter");
    assert_eq!(all.len(), 4);
    assert_eq!(all[3], "env:OPENROUTER_API_KEY");
    assert_eq!(ids(&credentials, "deepseek"), ["env:DEEPSEEK_API_KEY"]);
    assert_eq!(
        credentials
            .choose("openrouter", &[])
            .unwrap()
            .secret
            .expose(),
        "sk-1"
    );
    let before = std::fs::read_to_string(home.path().join("auth.json")).unwrap();
    assert_eq!(before, AUTH_JSON, "Hermes' file is never written");
}

#[test]
fn parking_is_recorded_and_survives_a_restart() {
    let home = home();
    let credentials = Credentials::load(home.path(), &Env::default(), &[]);
    credentials.park(
        "openrouter",
        "aaaaaa",
        Some(429),
        "You exceeded your current quota",
        None,
    );
    credentials.persist().unwrap();
    assert_eq!(credentials.choose("openrouter", &[]).unwrap().id, "bbbbbb");
    let restarted = Credentials::load(home.path(), &Env::default(), &[]);
    assert_eq!(restarted.choose("openrouter", &[]).unwrap().id, "bbbbbb");
    let view = restarted
        .list()
        .0
        .into_iter()
        .find(|v| v.id == "aaaaaa")
        .unwrap();
    let parked = view.parked.unwrap();
    assert_eq!((parked.code, parked.kind()), (Some(429), "rate-limited"));
}

#[test]
fn removing_a_file_row_hides_it_from_hermesd_only() {
    let home = home();
    let env = Env::from_pairs([("OPENROUTER_API_KEY", "sk-env")]);
    let credentials = Credentials::load(home.path(), &env, &[]);
    let removed = credentials.remove("openrouter", "primary").unwrap();
    assert_eq!(removed.id, "aaaaaa");
    credentials
        .remove("openrouter", "OPENROUTER_API_KEY")
        .unwrap();
    assert_eq!(ids(&credentials, "openrouter"), ["bbbbbb"]);
    let restarted = Credentials::load(home.path(), &env, &[]);
    assert_eq!(ids(&restarted, "openrouter"), ["bbbbbb"]);
    assert!(credentials.remove("openrouter", "9").is_err());
    assert_eq!(
        std::fs::read_to_string(home.path().join("auth.json")).unwrap(),
        AUTH_JSON
    );
}

#[test]
fn a_key_variable_added_by_name_is_read_at_each_load() {
    let home = tempfile::tempdir().unwrap();
    let credentials = Credentials::load(home.path(), &Env::default(), &[]);
    let view = credentials
        .add("anthropic", "", None, Some("MY_CLAUDE_KEY"))
        .unwrap();
    assert_eq!((view.label.as_str(), view.has_secret), ("api-key-1", false));
    credentials.reload(&Env::from_pairs([("MY_CLAUDE_KEY", "sk-ant-x")]), &[]);
    assert_eq!(
        credentials
            .choose("anthropic", &[])
            .unwrap()
            .secret
            .expose(),
        "sk-ant-x"
    );
    assert!(credentials.add("nowhere", "", Some("k"), None).is_err());
    assert!(credentials.add("openai", "", None, Some("1BAD")).is_err());
    let stored = std::fs::read_to_string(own_store::OwnStore::path(home.path())).unwrap();
    assert!(
        !stored.contains("sk-ant-x"),
        "a variable's value is not copied"
    );
}

#[test]
fn strategies_come_from_the_configuration() {
    let home = home();
    let strategies = [("openrouter".to_string(), Strategy::RoundRobin)];
    let credentials = Credentials::load(home.path(), &Env::default(), &strategies);
    let first = credentials.choose("openrouter", &[]).unwrap().id;
    let second = credentials.choose("openrouter", &[]).unwrap().id;
    assert_eq!((first.as_str(), second.as_str()), ("aaaaaa", "bbbbbb"));
}
