//! Values as the page's text: escaped for HTML, numbers short, JSON values as the file
//! holds them.

use serde_json::Value;

/// `s` escaped for HTML text and attribute values.
pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number as short text: integers without decimals, others with up to 3.
pub(super) fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A JSON value as table text: strings bare, the rest as JSON.
pub(super) fn value_text(v: &Value) -> String {
    match v {
        Value::String(x) => x.clone(),
        other => other.to_string(),
    }
}

/// Any part of a document as JSON text, as the file holds it.
pub(super) fn json_text(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_default()
}
