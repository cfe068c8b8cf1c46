//! Files users send: registering one (a `file_id`, a `file_unique_id` and a `file_path` under
//! the kind's folder, as Telegram lays them out) and serving its bytes at
//! `GET /file/bot{token}/{file_path}`.

use axum::{
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use bytes::Bytes;

use super::{
    params::decode_component,
    reply::{self, ApiError},
    state::{Shared, StoredFile, World},
};

/// What kind of file, for its id and path.
#[derive(Clone, Copy, Debug)]
pub(super) enum FileKind {
    Photo,
    Document,
    Voice,
}

impl World {
    /// Registers `bytes` as a new file of `kind` whose path ends in `extension`.
    pub(super) fn register_file(
        &mut self,
        kind: FileKind,
        bytes: Bytes,
        extension: &str,
    ) -> StoredFile {
        let n = self.next_file;
        self.next_file += 1;
        let (prefix, folder) = match kind {
            FileKind::Photo => ("AgACAgIAAxkBAAI", "photos"),
            FileKind::Document => ("BQACAgIAAxkBAAI", "documents"),
            FileKind::Voice => ("AwACAgIAAxkBAAI", "voice"),
        };
        let file = StoredFile {
            file_id: format!("{prefix}{n:08}fake"),
            file_unique_id: format!("AQAD{n:06}"),
            file_path: format!("{folder}/file_{n}.{extension}"),
            bytes,
        };
        self.files.insert(file.file_id.clone(), file.clone());
        file
    }
}

/// The extension of `file_name` (`bin` when it has none).
pub(super) fn extension(file_name: &str) -> &str {
    match file_name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() && !extension.is_empty() => extension,
        _ => "bin",
    }
}

/// `GET /file/bot{token}/{file_path}`; `rest` is the path after `/file/bot`.
pub(super) fn download(shared: &Shared, rest: &str) -> Response {
    let Some((token, path)) = rest.split_once('/') else {
        return reply::respond(Err(ApiError::not_found()));
    };
    let token = decode_component(token.as_bytes(), false);
    let path = decode_component(path.as_bytes(), false);
    let found = shared.read(|world| {
        if !world.tokens.contains(&token) {
            return Err(ApiError::unauthorized());
        }
        world
            .files
            .values()
            .find(|f| f.file_path == path)
            .map(|f| f.bytes.clone())
            .ok_or_else(ApiError::not_found)
    });
    match found {
        Ok(bytes) => {
            let headers = [(header::CONTENT_TYPE, "application/octet-stream")];
            (StatusCode::OK, headers, bytes).into_response()
        }
        Err(error) => reply::respond(Err(error)),
    }
}
