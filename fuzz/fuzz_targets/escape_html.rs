//! The HTML writer: escaped text holds no markup character, and decoding its
//! five entities gives the input back (control characters aside, which XML
//! cannot hold and which become U+FFFD, and invisible format characters,
//! shown as their code points).
#![no_main]
use libfuzzer_sys::fuzz_target;

use blindspot::io::escape::html;

fuzz_target!(|s: String| {
    let t = html::text(&s);
    assert!(!t.contains(['<', '>', '"', '\'']), "{t}");
    let back = t.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&");
    let want: String = s
        .chars()
        .map(|c| match c {
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => '\u{FFFD}'.to_string(),
            c if blindspot::io::escape::is_invisible_format(c) => format!("U+{:04X}", u32::from(c)),
            c => c.to_string(),
        })
        .collect();
    assert!(!t.chars().any(blindspot::io::escape::is_invisible_format), "{t}");
    assert_eq!(back, want);
    let inline = html::inline(&s);
    assert!(!inline.replace("<code>", "").replace("</code>", "").contains(['<', '>', '`']), "{inline}");
});
