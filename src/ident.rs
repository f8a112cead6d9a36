//! SQL identifiers as text: when a name needs double quotes, and the one way sqb quotes them
//! (both engines spell a quoted identifier alike: double quotes, quotes inside doubled).

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
        quoted(name)
    }
}

/// `name` double-quoted, quotes inside doubled: always, for SQL that must not read a name as a
/// keyword or fold its case.
pub fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::{quote_ident, quoted};

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(quote_ident("orders"), "orders");
        assert_eq!(quote_ident("Orders"), "\"Orders\"");
        assert_eq!(quote_ident("a b"), "\"a b\"");
        assert_eq!(quote_ident("quote\"d"), "\"quote\"\"d\"");
        assert_eq!(quote_ident("1st"), "\"1st\"");
        assert_eq!(quoted("select"), "\"select\"");
        assert_eq!(quoted("a\"b"), "\"a\"\"b\"");
    }
}
