//! What a test does when something CI provides is missing: one `SKIPPED:`
//! line on a bare clone, a failure naming the same thing under
//! `ZUGZWANG_REQUIRE_SHARED` (set by `.ci/run`).

mod common;

use common::{REQUIRE_SHARED, on_missing};

const WHY: &str = "../shared/syzygy/standard not found; the 5-piece part of this test did not run";

#[test]
fn a_bare_clone_skips_with_one_line() {
    assert_eq!(
        on_missing(false, "api::five_pieces", WHY),
        Ok(format!("SKIPPED: api::five_pieces: {WHY}"))
    );
}

#[test]
fn ci_fails_naming_what_is_missing() {
    let failure = on_missing(true, "api::five_pieces", WHY).expect_err("must fail");
    assert!(
        failure.starts_with(&format!("api::five_pieces: {WHY}")),
        "{failure}"
    );
    assert!(failure.contains(REQUIRE_SHARED), "{failure}");
}
