//! Type spellings shared between the declared columns that spell their type alike.
//!
//! A large project declares hundreds of thousands of columns with a few dozen type spellings:
//! each thread that reads declarations keeps one shared copy of each spelling it has seen (up to
//! [`MAX_SPELLINGS`]), so that a column's type text costs a pointer instead of an allocation.

use std::cell::RefCell;
use std::sync::Arc;

/// Beyond this many distinct spellings a thread stops remembering new ones (they are still
/// returned, unshared): a project that spells every type differently gains nothing from it.
const MAX_SPELLINGS: usize = 4096;

thread_local! {
    static SPELLINGS: RefCell<foldhash::HashSet<Arc<str>>> = RefCell::default();
}

/// `text` as a shared string: the same one for every call with equal text on this thread.
pub fn shared(text: &str) -> Arc<str> {
    SPELLINGS.with(|spellings| {
        let mut spellings = spellings.borrow_mut();
        if let Some(known) = spellings.get(text) {
            return known.clone();
        }
        let new: Arc<str> = Arc::from(text);
        if spellings.len() < MAX_SPELLINGS {
            spellings.insert(new.clone());
        }
        new
    })
}

/// Deserializes a declared type as a shared spelling (for the declarations cache).
pub fn deserialize<'de, D>(
    deserializer: D,
) -> Result<Option<crate::source::Spanned<Arc<str>>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let text: Option<crate::source::Spanned<String>> =
        serde::Deserialize::deserialize(deserializer)?;
    Ok(text.map(|t| crate::source::Spanned::new(shared(&t.value), t.loc)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_spellings_are_one_string() {
        let a = shared("varchar(40)");
        let b = shared(&String::from("varchar(40)"));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &shared("VARCHAR(40)")));
        assert_eq!(&*shared(""), "");
    }
}
