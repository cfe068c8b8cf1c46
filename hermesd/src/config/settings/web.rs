//! The `web` section and its keys from the environment: which search backend `web_search` uses
//! (`web.search_backend`, else `web.backend`, else the first one configured, as Hermes picks),
//! the backends' keys and addresses (`SEARXNG_URL`, `BRAVE_SEARCH_API_KEY`, `TAVILY_API_KEY`,
//! `EXA_API_KEY`; base URLs for tests and self-hosted gateways), and how much of a page
//! `web_extract` returns (`web.extract_char_limit`).

use hermes_proto::env::Env;

use super::read::Reader;

/// Hermes' default and bounds of `web.extract_char_limit`.
pub const DEFAULT_EXTRACT_CHARS: u64 = 15_000;
pub const MIN_EXTRACT_CHARS: u64 = 2_000;
pub const MAX_EXTRACT_CHARS: u64 = 500_000;

/// The search backends hermesd speaks, by Hermes' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchBackend {
    Searxng,
    Brave,
    Tavily,
    Exa,
    Ddgs,
}

impl SearchBackend {
    /// A backend by the name Hermes' configuration gives it.
    pub fn named(name: &str) -> Option<Self> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "searxng" => Self::Searxng,
            "brave-free" | "brave" => Self::Brave,
            "tavily" => Self::Tavily,
            "exa" => Self::Exa,
            "ddgs" | "duckduckgo" => Self::Ddgs,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Searxng => "searxng",
            Self::Brave => "brave-free",
            Self::Tavily => "tavily",
            Self::Exa => "exa",
            Self::Ddgs => "ddgs",
        }
    }
}

/// What `web_search` and `web_extract` read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSection {
    /// `web.backend` as written (lower-cased), empty when unset.
    pub backend: String,
    /// `web.search_backend` as written (lower-cased), empty when unset.
    pub search_backend: String,
    /// Characters of one page's Markdown returned whole (`web.extract_char_limit`).
    pub extract_char_limit: usize,
    pub searxng_url: String,
    pub brave_api_key: String,
    pub brave_base_url: String,
    pub tavily_api_key: String,
    pub tavily_base_url: String,
    pub exa_api_key: String,
    pub exa_base_url: String,
    pub ddgs_base_url: String,
}

impl Default for WebSection {
    fn default() -> Self {
        Self::read(&mut Reader::new(&serde_yaml::Value::Null), &Env::default())
    }
}

impl WebSection {
    pub fn read(r: &mut Reader<'_>, env: &Env) -> Self {
        let var = |name: &str| env.get(name).map(str::trim).unwrap_or_default().to_string();
        let or = |name: &str, default: &str| {
            let v = var(name);
            let v = if v.is_empty() { default.to_string() } else { v };
            v.trim_end_matches('/').to_string()
        };
        // Hermes hands pages to a third-party reader (web.extract_backend: firecrawl, tavily,
        // exa, parallel); hermesd reads them itself, so no page leaves through a third party.
        let extract_backend = r.text("web.extract_backend");
        if !extract_backend.trim().is_empty() {
            r.notice_raw(format!(
                "web.extract_backend: {} is not used: hermesd's web_extract fetches and \
                 converts pages itself",
                extract_backend.trim()
            ));
        }
        Self {
            backend: r.text("web.backend").to_ascii_lowercase(),
            search_backend: r.text("web.search_backend").to_ascii_lowercase(),
            extract_char_limit: r.whole(
                "web.extract_char_limit",
                DEFAULT_EXTRACT_CHARS,
                MIN_EXTRACT_CHARS,
                MAX_EXTRACT_CHARS,
            ) as usize,
            searxng_url: var("SEARXNG_URL").trim_end_matches('/').to_string(),
            brave_api_key: var("BRAVE_SEARCH_API_KEY"),
            brave_base_url: or("BRAVE_SEARCH_BASE_URL", "https://api.search.brave.com"),
            tavily_api_key: var("TAVILY_API_KEY"),
            tavily_base_url: or("TAVILY_BASE_URL", "https://api.tavily.com"),
            exa_api_key: var("EXA_API_KEY"),
            exa_base_url: or("EXA_BASE_URL", "https://api.exa.ai"),
            ddgs_base_url: or("DDGS_BASE_URL", "https://html.duckduckgo.com"),
        }
    }

    /// Whether `backend` has what it needs (a key or an address; DuckDuckGo needs nothing).
    pub fn configured(&self, backend: SearchBackend) -> bool {
        match backend {
            SearchBackend::Searxng => !self.searxng_url.is_empty(),
            SearchBackend::Brave => !self.brave_api_key.is_empty(),
            SearchBackend::Tavily => !self.tavily_api_key.is_empty(),
            SearchBackend::Exa => !self.exa_api_key.is_empty(),
            SearchBackend::Ddgs => true,
        }
    }

    /// The backend `web_search` uses, as Hermes picks it: `web.search_backend` when it is
    /// configured, else `web.backend`, else the first configured of Tavily, Exa, SearXNG,
    /// Brave, DuckDuckGo. `Err` names the setting to fix.
    pub fn search_backend(&self) -> Result<SearchBackend, String> {
        if let Some(b) = SearchBackend::named(&self.search_backend)
            && self.configured(b)
        {
            return Ok(b);
        }
        for (key, name) in [
            ("web.backend", &self.backend),
            ("web.search_backend", &self.search_backend),
        ] {
            if name.is_empty() {
                continue;
            }
            return match SearchBackend::named(name) {
                Some(b) => Ok(b),
                None => Err(format!(
                    "{key} is {name:?}, which hermesd cannot search with; set it to searxng, \
                     brave-free, tavily, exa or ddgs"
                )),
            };
        }
        Ok([
            SearchBackend::Tavily,
            SearchBackend::Exa,
            SearchBackend::Searxng,
            SearchBackend::Brave,
        ]
        .into_iter()
        .find(|b| self.configured(*b))
        .unwrap_or(SearchBackend::Ddgs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str, env: &[(&str, &str)]) -> WebSection {
        let tree: serde_yaml::Value = serde_yaml::from_str(yaml).unwrap();
        WebSection::read(
            &mut Reader::new(&tree),
            &Env::from_pairs(env.iter().copied()),
        )
    }

    #[test]
    fn the_backend_is_picked_as_hermes_picks_it() {
        assert_eq!(read("{}", &[]).search_backend(), Ok(SearchBackend::Ddgs));
        let keys = [
            ("EXA_API_KEY", "e"),
            ("SEARXNG_URL", "http://127.0.0.1:8888/"),
        ];
        let both = read("{}", &keys);
        assert_eq!(both.search_backend(), Ok(SearchBackend::Exa));
        assert_eq!(both.searxng_url, "http://127.0.0.1:8888");
        let chosen = read("web: {backend: searxng}", &keys);
        assert_eq!(chosen.search_backend(), Ok(SearchBackend::Searxng));
        let specific = read("web: {backend: exa, search_backend: searxng}", &keys);
        assert_eq!(specific.search_backend(), Ok(SearchBackend::Searxng));
        // A per-capability choice without its key falls back to the shared one.
        let fallback = read("web: {backend: exa, search_backend: tavily}", &keys);
        assert_eq!(fallback.search_backend(), Ok(SearchBackend::Exa));
        // The shared choice is kept without its key: the search says which key is missing.
        let missing = read("web: {backend: brave-free}", &[]);
        assert_eq!(missing.search_backend(), Ok(SearchBackend::Brave));
        assert!(!missing.configured(SearchBackend::Brave));
        let unknown = read("web: {backend: firecrawl}", &[])
            .search_backend()
            .unwrap_err();
        assert!(
            unknown.contains("web.backend is \"firecrawl\""),
            "{unknown}"
        );
    }

    #[test]
    fn the_char_limit_is_bounded() {
        assert_eq!(read("{}", &[]).extract_char_limit, 15_000);
        assert_eq!(
            read("web: {extract_char_limit: 10}", &[]).extract_char_limit,
            2_000
        );
        assert_eq!(
            read("web: {extract_char_limit: 40000}", &[]).extract_char_limit,
            40_000
        );
    }

    #[test]
    fn a_third_party_extract_backend_is_named_as_unused() {
        let tree: serde_yaml::Value =
            serde_yaml::from_str("web: {extract_backend: firecrawl}").unwrap();
        let mut r = Reader::new(&tree);
        WebSection::read(&mut r, &Env::from_pairs(std::iter::empty::<(&str, &str)>()));
        let notices = r.into_notices();
        assert!(
            notices.iter().any(|n| n.contains("firecrawl is not used")),
            "{notices:?}"
        );
    }
}
