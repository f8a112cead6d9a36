//! Room `c`: a macro's arguments name `a`.

pub fn helper() -> u32 {
    2
}

pub fn show() -> String {
    format!("{}", crate::a::inner::value())
}
