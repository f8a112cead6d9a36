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

/// Deserializes a declared type as a shared spelling (for the declarations cache), looked up
/// from the bytes as they are read: no string is made for a spelling already seen.
pub fn deserialize<'de, D>(
    deserializer: D,
) -> Result<Option<crate::source::Spanned<Arc<str>>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let text: Option<crate::source::Spanned<Spelling>> =
        serde::Deserialize::deserialize(deserializer)?;
    Ok(text.map(|t| crate::source::Spanned::new(t.value.0, t.loc)))
}

/// A spelling deserialized straight into its shared string.
struct Spelling(Arc<str>);

impl<'de> serde::Deserialize<'de> for Spelling {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Spelling;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a type spelling")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Spelling, E> {
                Ok(Spelling(shared(text)))
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spelling read back from the cache's encoding is the thread's shared string.
    #[test]
    fn a_stored_spelling_reads_back_shared() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Holder {
            #[serde(deserialize_with = "deserialize")]
            ty: Option<crate::source::Spanned<Arc<str>>>,
        }
        let loc = crate::source::Loc::file_start(crate::source::FileId(0));
        let held = Holder {
            ty: Some(crate::source::Spanned::new(shared("numeric(12, 2)"), loc)),
        };
        let bytes = postcard::to_allocvec(&held).unwrap();
        let back: Holder = postcard::from_bytes(&bytes).unwrap();
        let ty = back.ty.unwrap();
        assert_eq!(&*ty.value, "numeric(12, 2)");
        assert!(Arc::ptr_eq(&ty.value, &shared("numeric(12, 2)")));
        let none: Holder =
            postcard::from_bytes(&postcard::to_allocvec(&Holder { ty: None }).unwrap()).unwrap();
        assert!(none.ty.is_none());
    }

    #[test]
    fn equal_spellings_are_one_string() {
        let a = shared("varchar(40)");
        let b = shared(&String::from("varchar(40)"));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &shared("VARCHAR(40)")));
        assert_eq!(&*shared(""), "");
    }
}
