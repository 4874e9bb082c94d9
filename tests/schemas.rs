//! `schemas/*.json` are generated from the Rust types; this fails when they are stale.

mod common;

#[test]
fn committed_schemas_are_up_to_date() {
    let dir = common::root().join("schemas");
    for (name, text) in blindspot::cli::schema::generated() {
        let committed = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        assert!(
            committed == text,
            "schemas/{name} is stale: regenerate with `cargo run -- schema --out schemas` and commit it"
        );
    }
}
