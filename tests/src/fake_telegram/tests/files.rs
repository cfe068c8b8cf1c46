//! Files users send: the message's file fields, `getFile`, and the download endpoint.

use serde_json::json;

use super::{Bot, alice};

#[tokio::test]
async fn a_document_round_trips_through_get_file() {
    let bot = Bot::start().await;
    let (chat, alice) = alice();
    let bytes = b"%PDF-1.7 fake".to_vec();
    let pushed = bot.tg.push_document(
        &chat,
        &alice,
        bytes.clone(),
        "report.pdf",
        "application/pdf",
        Some("/summarize this"),
    );
    let update = &bot.tg.pending_updates()[0];
    let document = &update["message"]["document"];
    assert_eq!(document["file_name"], "report.pdf");
    assert_eq!(document["file_size"], bytes.len());
    assert_eq!(update["message"]["caption"], "/summarize this");
    assert_eq!(
        update["message"]["caption_entities"][0]["type"],
        "bot_command"
    );
    let file_id = pushed.file_id.unwrap();
    assert_eq!(document["file_id"], file_id.as_str());

    let file = bot
        .call("getFile", json!({"file_id": file_id}))
        .await
        .result();
    assert_eq!(file["file_size"], bytes.len());
    let path = file["file_path"].as_str().unwrap();
    assert!(
        path.starts_with("documents/") && path.ends_with(".pdf"),
        "{path}"
    );
    let url = format!("{}{}/{path}", bot.tg.file_base_url(), bot.tg.token());
    let download = bot.get(&url).await;
    assert_eq!(download.status, 200);
    assert_eq!(download.body.as_ref(), bytes.as_slice());

    let missing = format!(
        "{}{}/documents/nothing.pdf",
        bot.tg.file_base_url(),
        bot.tg.token()
    );
    assert_eq!(bot.get(&missing).await.status, 404);
    let unknown = bot.call("getFile", json!({"file_id": "nope"})).await;
    assert_eq!(unknown.error(400), "Bad Request: invalid file_id");
}

#[tokio::test]
async fn photos_and_voice_notes_are_files_too() {
    let bot = Bot::start().await;
    let (chat, alice) = alice();
    let photo = bot
        .tg
        .push_photo(&chat, &alice, vec![0xff, 0xd8, 0xff], None);
    let voice = bot.tg.push_voice(&chat, &alice, vec![b'O'; 10], 3, None);
    let updates = bot.tg.pending_updates();
    let sizes = updates[0]["message"]["photo"].as_array().unwrap();
    assert_eq!(
        sizes.last().unwrap()["file_id"],
        photo.file_id.clone().unwrap().as_str()
    );
    assert_eq!(updates[1]["message"]["voice"]["duration"], 3);
    assert_eq!(voice.message_id, photo.message_id + 1);
    for file_id in [photo.file_id, voice.file_id] {
        let file = bot
            .call("getFile", json!({"file_id": file_id}))
            .await
            .result();
        let url = format!(
            "{}{}/{}",
            bot.tg.file_base_url(),
            bot.tg.token(),
            file["file_path"].as_str().unwrap()
        );
        assert_eq!(bot.get(&url).await.status, 200);
    }
}
