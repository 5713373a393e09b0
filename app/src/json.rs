//! Reading the API's JSON into its types without serde, for the browser.
//!
//! serde's derived visitors, serde_json's parser and the float printing that
//! only its error messages reach were 27.6 KiB, a tenth, of the gzipped
//! first download (server/docs/benchmarks.md, "Answers read without serde"). In
//! the browser the browser's own `JSON.parse` builds the value and
//! [`FromJson`] reads it field by field; elsewhere (the server, the tests)
//! serde_json builds it, so the tests read back what the server writes with
//! the very code the page runs. The server still writes JSON with serde.

use leptos::server::codee::{Decoder, Encoder};
use serde::Serialize;
#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
use wasm_bindgen::JsCast;

/// Why a JSON text could not be read as the type asked for.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum JsonError {
    #[error("it is not JSON: {0}")]
    Syntax(String),
    #[error("`{0}` is missing")]
    Missing(&'static str),
    #[error("`{0}` is not {1}")]
    Wrong(&'static str, &'static str),
}

/// A parsed JSON value, as far as the API's types need to look into one.
pub trait Json: Sized {
    /// An object's field; `None` when it is absent or `self` is no object.
    fn field(&self, name: &str) -> Option<Self>;
    fn is_null(&self) -> bool;
    fn as_bool(&self) -> Option<bool>;
    fn as_number(&self) -> Option<f64>;
    fn as_string(&self) -> Option<String>;
    /// An array's items; `None` when `self` is no array.
    fn items(&self) -> Option<Vec<Self>>;
}

/// A type read from a JSON value of the shape the server writes with serde.
pub trait FromJson: Sized {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError>;
}

/// Reads a JSON text as `T`.
pub fn read<T: FromJson>(text: &str) -> Result<T, JsonError> {
    T::from_json(&parse(text)?)
}

#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
fn parse(text: &str) -> Result<wasm_bindgen::JsValue, JsonError> {
    js_sys::JSON::parse(text).map_err(|err| {
        JsonError::Syntax(
            err.dyn_ref::<js_sys::Error>()
                .map(|err| String::from(err.message()))
                .unwrap_or_default(),
        )
    })
}

#[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
fn parse(text: &str) -> Result<serde_json::Value, JsonError> {
    serde_json::from_str(text).map_err(|err| JsonError::Syntax(err.to_string()))
}

#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
impl Json for wasm_bindgen::JsValue {
    fn field(&self, name: &str) -> Option<Self> {
        if !self.is_object() {
            return None;
        }
        js_sys::Reflect::get(self, &wasm_bindgen::JsValue::from_str(name))
            .ok()
            .filter(|value| !value.is_undefined())
    }

    fn is_null(&self) -> bool {
        wasm_bindgen::JsValue::is_null(self)
    }

    fn as_bool(&self) -> Option<bool> {
        wasm_bindgen::JsValue::as_bool(self)
    }

    fn as_number(&self) -> Option<f64> {
        self.as_f64()
    }

    fn as_string(&self) -> Option<String> {
        wasm_bindgen::JsValue::as_string(self)
    }

    fn items(&self) -> Option<Vec<Self>> {
        self.dyn_ref::<js_sys::Array>()
            .map(|array| array.iter().collect())
    }
}

#[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
impl Json for serde_json::Value {
    fn field(&self, name: &str) -> Option<Self> {
        self.get(name).cloned()
    }

    fn is_null(&self) -> bool {
        serde_json::Value::is_null(self)
    }

    fn as_bool(&self) -> Option<bool> {
        serde_json::Value::as_bool(self)
    }

    fn as_number(&self) -> Option<f64> {
        self.as_f64()
    }

    fn as_string(&self) -> Option<String> {
        self.as_str().map(str::to_string)
    }

    fn items(&self) -> Option<Vec<Self>> {
        self.as_array().cloned()
    }
}

/// An object's field that must be there (null counts as there).
pub fn field<J: Json>(object: &J, name: &'static str) -> Result<J, JsonError> {
    object.field(name).ok_or(JsonError::Missing(name))
}

pub fn bool_field<J: Json>(object: &J, name: &'static str) -> Result<bool, JsonError> {
    field(object, name)?
        .as_bool()
        .ok_or(JsonError::Wrong(name, "true or false"))
}

pub fn string_field<J: Json>(object: &J, name: &'static str) -> Result<String, JsonError> {
    field(object, name)?
        .as_string()
        .ok_or(JsonError::Wrong(name, "a string"))
}

/// A whole number that fits `T` (a ply count, a table count).
pub fn int_field<J: Json, T: TryFrom<i64>>(object: &J, name: &'static str) -> Result<T, JsonError> {
    whole(&field(object, name)?).ok_or(JsonError::Wrong(name, "a whole number in range"))
}

/// A whole number, or null, or absent (serde's reading of an `Option`).
pub fn optional_int_field<J: Json>(
    object: &J,
    name: &'static str,
) -> Result<Option<i32>, JsonError> {
    present(object, name)
        .map(|value| {
            whole(&value).ok_or(JsonError::Wrong(name, "a whole number in range, or null"))
        })
        .transpose()
}

/// A value, or null, or absent.
pub fn optional_field<J: Json, T: FromJson>(
    object: &J,
    name: &'static str,
) -> Result<Option<T>, JsonError> {
    present(object, name)
        .map(|value| T::from_json(&value))
        .transpose()
}

/// A field that is there and not null.
fn present<J: Json>(object: &J, name: &str) -> Option<J> {
    object.field(name).filter(|value| !value.is_null())
}

/// An array of `T`.
pub fn list_field<J: Json, T: FromJson>(
    object: &J,
    name: &'static str,
) -> Result<Vec<T>, JsonError> {
    items_of(&field(object, name)?, name)
}

/// An array of `T`, empty when absent (serde's `#[serde(default)]`).
pub fn list_field_or_empty<J: Json, T: FromJson>(
    object: &J,
    name: &'static str,
) -> Result<Vec<T>, JsonError> {
    match object.field(name) {
        None => Ok(Vec::new()),
        Some(value) => items_of(&value, name),
    }
}

fn items_of<J: Json, T: FromJson>(value: &J, name: &'static str) -> Result<Vec<T>, JsonError> {
    value
        .items()
        .ok_or(JsonError::Wrong(name, "an array"))?
        .iter()
        .map(T::from_json)
        .collect()
}

/// A number that is whole and fits `T`: no float is ever printed or kept.
fn whole<J: Json, T: TryFrom<i64>>(value: &J) -> Option<T> {
    let number = value.as_number()?;
    if number.fract() != 0.0 || number.abs() > 9_007_199_254_740_992.0 {
        return None;
    }
    T::try_from(number as i64).ok()
}

impl FromJson for String {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        value
            .as_string()
            .ok_or(JsonError::Wrong("value", "a string"))
    }
}

/// Null reads as `None`, as serde writes it.
impl<T: FromJson> FromJson for Option<T> {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        if value.is_null() {
            return Ok(None);
        }
        T::from_json(value).map(Some)
    }
}

/// A pair, written by serde as a two-item array.
impl<A: FromJson, B: FromJson> FromJson for (A, B) {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        let wrong = JsonError::Wrong("value", "a pair");
        let [a, b] = <[J; 2]>::try_from(value.items().ok_or(wrong.clone())?).map_err(|_| wrong)?;
        Ok((A::from_json(&a)?, B::from_json(&b)?))
    }
}

/// `{"Ok": ...}` or `{"Err": ...}`, as serde writes a `Result`.
impl<T: FromJson, E: FromJson> FromJson for Result<T, E> {
    fn from_json<J: Json>(value: &J) -> Result<Self, JsonError> {
        if let Some(ok) = value.field("Ok") {
            return T::from_json(&ok).map(Ok);
        }
        match value.field("Err") {
            Some(err) => E::from_json(&err).map(Err),
            None => Err(JsonError::Missing("Ok")),
        }
    }
}

/// The codec of the page's resources: the server writes their values into
/// the page with serde_json, the browser reads them with [`FromJson`].
pub struct PageCodec;

impl<T: Serialize> Encoder<T> for PageCodec {
    type Error = String;
    type Encoded = String;

    fn encode(value: &T) -> Result<String, String> {
        serde_json::to_string(value).map_err(|err| err.to_string())
    }
}

impl<T: FromJson> Decoder<T> for PageCodec {
    type Error = String;
    type Encoded = str;

    fn decode(text: &str) -> Result<T, String> {
        read(text).map_err(|err| err.to_string())
    }
}
