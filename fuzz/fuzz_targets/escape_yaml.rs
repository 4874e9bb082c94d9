//! The YAML scalar writer: any string, quoted, reads back as itself with
//! serde_yaml_ng, as a scalar and as a mapping's only value, and stays on
//! one line; a comment stays on its line.
#![no_main]
use libfuzzer_sys::fuzz_target;

use blindspot::io::escape::yaml;

fuzz_target!(|s: String| {
    let q = yaml::quoted(&s);
    assert!(!q.contains(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']), "{q}");
    let back: String = serde_yaml_ng::from_str(&q).unwrap_or_else(|e| panic!("{e}: {q}"));
    assert_eq!(back, s);
    let doc = format!("# {}\nkey: {q}\n", yaml::comment(&s));
    let map: std::collections::BTreeMap<String, String> =
        serde_yaml_ng::from_str(&doc).unwrap_or_else(|e| panic!("{e}: {doc}"));
    assert_eq!(map.len(), 1);
    assert_eq!(map["key"], s);
});
