//! `reply_markup`: reading it (an object or its JSON text), the checks Telegram makes on an
//! inline keyboard (every button an object with a `text` and an action, `callback_data` at most
//! 64 bytes), and the part a Message shows (only an inline keyboard is echoed).

use serde_json::{Value, json};

use super::{params::Params, reply::ApiError};

/// The button fields that give an inline button its action.
const ACTIONS: &[&str] = &[
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
];

/// The longest `callback_data`, in bytes.
const MAX_CALLBACK_DATA: usize = 64;

/// The `reply_markup` parameter, checked; `None` when absent.
pub(super) fn from_params(params: &Params) -> Result<Option<Value>, ApiError> {
    let markup = params
        .json("reply_markup")
        .map_err(|()| ApiError::bad("can't parse reply keyboard markup JSON object"))?;
    let Some(markup) = markup else {
        return Ok(None);
    };
    let Some(object) = markup.as_object() else {
        return Err(ApiError::bad("object expected as reply markup"));
    };
    if let Some(rows) = object.get("inline_keyboard") {
        let rows = rows_of(
            rows,
            "field \"inline_keyboard\" of the InlineKeyboardMarkup",
        )?;
        for button in rows.into_iter().flatten() {
            check_inline_button(button)?;
        }
    }
    if let Some(rows) = object.get("keyboard") {
        rows_of(rows, "field \"keyboard\"")?;
    }
    Ok(Some(markup))
}

/// `rows` as an array of arrays.
fn rows_of<'a>(rows: &'a Value, what: &str) -> Result<Vec<&'a Vec<Value>>, ApiError> {
    let error = || ApiError::bad(format!("{what} must be an Array of Arrays"));
    rows.as_array()
        .ok_or_else(error)?
        .iter()
        .map(|row| row.as_array().ok_or_else(error))
        .collect()
}

fn check_inline_button(button: &Value) -> Result<(), ApiError> {
    let fail = |why: &str| ApiError::bad(format!("can't parse inline keyboard button: {why}"));
    let Some(button) = button.as_object() else {
        return Err(fail("InlineKeyboardButton must be an Object"));
    };
    match button.get("text") {
        Some(Value::String(_)) => {}
        None => return Err(fail("Can't find field \"text\"")),
        Some(_) => return Err(fail("Field \"text\" must be of type String")),
    }
    if let Some(data) = button.get("callback_data").and_then(Value::as_str)
        && data.len() > MAX_CALLBACK_DATA
    {
        return Err(ApiError::bad("BUTTON_DATA_INVALID"));
    }
    let acts = |name: &&str| match button.get(*name) {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty() || name.starts_with("switch_inline"),
        Some(Value::Bool(b)) => *b,
        Some(_) => true,
    };
    if !ACTIONS.iter().any(acts) {
        return Err(fail("Text buttons are unallowed in the inline keyboard"));
    }
    Ok(())
}

/// The reply markup a Message shows for `markup`: its inline keyboard, if it has one.
pub(super) fn inline(markup: &Value) -> Option<Value> {
    let rows = markup.get("inline_keyboard")?.as_array()?;
    (!rows.is_empty()).then(|| json!({"inline_keyboard": rows}))
}
