//! API answers tied to the table set they came from: the `X-Table-Set`
//! header on every API response, and on answers an ETag and a cache
//! lifetime, with `If-None-Match` answered 304 before any probe.
//!
//! An answer never changes while the tables and the server's code stay the
//! same, so the ETag is the table-set digest plus a hash of what else
//! decides the bytes: the server version, the route, the position (without
//! its fullmove number, which no answer depends on) and JSON or CBOR. A
//! table update changes the digest and so every ETag; a release that
//! changes answers must change the version. The ETag is weak because the
//! bytes also depend on the content encoding (nginx's gzip weakens strong
//! ones anyway); weak comparison is what `If-None-Match` uses.

use axum::{
    body::Body,
    http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header},
    response::Response,
};
use shakmaty::variant::VariantPosition;

use app::api::DTM_UNAVAILABLE_HEADER;

use crate::engine::{TableSet, answer_cache};

/// The response header naming the table set (`X-Table-Set: <digest>`).
pub const X_TABLE_SET: HeaderName = HeaderName::from_static("x-table-set");

/// How long clients and caches may reuse an answer without asking again.
/// Answers only change when tables are added, so this bounds how long a
/// browser may show "table not installed" after they were; revalidating
/// after that costs a 304 without a probe.
pub const CACHE_CONTROL: &str = "public, max-age=3600";

/// The `X-Table-Set` value of a set.
pub fn header_value(set: &TableSet) -> HeaderValue {
    HeaderValue::from_str(set.digest()).unwrap_or_else(|_| HeaderValue::from_static("unknown"))
}

/// The validator of one answer: its ETag, and what a fresh answer carries.
#[derive(Debug, Clone)]
pub struct Validator {
    etag: String,
}

impl Validator {
    /// The ETag of `route`'s answer for `pos` in `format` from `set`.
    pub fn new(set: &TableSet, route: &str, pos: &VariantPosition, format: &str) -> Validator {
        let request = format!(
            "{}\n{route}\n{}\n{format}",
            env!("CARGO_PKG_VERSION"),
            answer_cache::key(pos)
        );
        let hash = xxhash_rust::xxh3::xxh3_64(request.as_bytes());
        Validator {
            etag: format!("W/\"{}-{hash:016x}\"", set.digest()),
        }
    }

    /// The ETag of an upstream server's answer (`serve --upstream`): its
    /// bytes decide it, not the local table set; an answer never changes.
    pub fn of_upstream(body: &[u8], format: &str) -> Validator {
        let hash = xxhash_rust::xxh3::xxh3_64(body);
        Validator {
            etag: format!("W/\"upstream-{hash:016x}-{format}\""),
        }
    }

    /// Whether the client's `If-None-Match` holds this answer already.
    pub fn matches(&self, headers: &HeaderMap) -> bool {
        let ours = opaque(&self.etag);
        headers
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .any(|tag| tag == "*" || opaque(tag) == ours)
    }

    /// 304 with the headers the full answer would carry.
    pub fn not_modified(&self) -> Response {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        self.stamp(response.headers_mut());
        response
    }

    /// ETag, Cache-Control and Vary on a successful answer. An answer
    /// that misses part of itself because a DTM table failed
    /// (`X-Dtm-Unavailable`) is not the answer of the table set: no ETag
    /// (a later 304 would vouch for it) and `no-store`.
    pub fn stamp(&self, headers: &mut HeaderMap) {
        if headers.contains_key(DTM_UNAVAILABLE_HEADER) {
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            headers.append(header::VARY, HeaderValue::from_static("accept"));
            return;
        }
        if let Ok(etag) = HeaderValue::from_str(&self.etag) {
            headers.insert(header::ETAG, etag);
        }
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(CACHE_CONTROL),
        );
        // JSON or CBOR is chosen by Accept.
        headers.append(header::VARY, HeaderValue::from_static("accept"));
    }
}

/// An entity tag without its weakness mark: `If-None-Match` compares weakly.
fn opaque(tag: &str) -> &str {
    tag.strip_prefix("W/").unwrap_or(tag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, fen::Fen};

    fn pos(fen: &str) -> VariantPosition {
        let chess: shakmaty::Chess = fen
            .parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("position");
        chess.into()
    }

    fn set(size: u64) -> TableSet {
        TableSet::of([("KRvK.rtbw".to_string(), size)])
    }

    fn if_none_match(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn the_fullmove_number_keeps_the_etag_and_the_rest_changes_it() {
        let krk = "4k3/8/8/8/8/8/8/4K2R w - - 0 1";
        let base = Validator::new(&set(1), "/standard", &pos(krk), "json").etag;
        let later = "4k3/8/8/8/8/8/8/4K2R w - - 0 40";
        assert_eq!(
            base,
            Validator::new(&set(1), "/standard", &pos(later), "json").etag
        );
        let clock = "4k3/8/8/8/8/8/8/4K2R w - - 7 40";
        for other in [
            Validator::new(&set(2), "/standard", &pos(krk), "json"),
            Validator::new(&set(1), "/standard/mainline", &pos(krk), "json"),
            Validator::new(&set(1), "/standard", &pos(krk), "cbor"),
            Validator::new(&set(1), "/standard", &pos(clock), "json"),
        ] {
            assert_ne!(base, other.etag);
        }
        assert!(base.starts_with(&format!("W/\"{}-", set(1).digest())));
    }

    #[test]
    fn an_answer_missing_its_dtm_is_not_for_keeping() {
        let validator = Validator::new(
            &set(1),
            "/standard",
            &pos("8/8/8/8/8/8/8/K1k5 w - - 0 1"),
            "json",
        );
        let mut whole = HeaderMap::new();
        validator.stamp(&mut whole);
        assert!(whole.contains_key(header::ETAG));
        assert_eq!(whole[header::CACHE_CONTROL], CACHE_CONTROL);
        let mut degraded = HeaderMap::new();
        degraded.insert(
            DTM_UNAVAILABLE_HEADER,
            HeaderValue::from_static("KQK.egtb.bz;problem=damaged;root"),
        );
        validator.stamp(&mut degraded);
        assert!(!degraded.contains_key(header::ETAG));
        assert_eq!(degraded[header::CACHE_CONTROL], "no-store");
        assert_eq!(degraded[header::VARY], "accept");
    }

    #[test]
    fn if_none_match_compares_weakly_and_in_lists() {
        let validator = Validator::new(
            &set(1),
            "/standard",
            &pos("8/8/8/8/8/8/8/K1k5 w - - 0 1"),
            "json",
        );
        let strong = validator.etag.trim_start_matches("W/").to_string();
        assert!(validator.matches(&if_none_match(&validator.etag)));
        assert!(validator.matches(&if_none_match(&format!("\"x\", {strong}"))));
        assert!(validator.matches(&if_none_match("*")));
        assert!(!validator.matches(&if_none_match("W/\"x\"")));
        assert!(!validator.matches(&HeaderMap::new()));
    }
}
