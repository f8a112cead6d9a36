//! SQL identifiers as text: when a name needs double quotes.

/// `name` as SQL spells it: bare when it is a plain lower-case identifier (which every engine
/// reads back unchanged), else double-quoted with quotes doubled.
pub fn quote_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

#[cfg(test)]
mod tests {
    use super::quote_ident;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(quote_ident("orders"), "orders");
        assert_eq!(quote_ident("Orders"), "\"Orders\"");
        assert_eq!(quote_ident("a b"), "\"a b\"");
        assert_eq!(quote_ident("quote\"d"), "\"quote\"\"d\"");
        assert_eq!(quote_ident("1st"), "\"1st\"");
    }
}
