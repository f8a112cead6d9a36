//! `sqb ls` on the shop example: what each kind of selector picks, in text and JSON, and a
//! selector that matches nothing.

mod common;

use common::{repo, run, sqb, transcript};

#[test]
fn ls_lists_what_selectors_pick() {
    let shop = repo().join("examples/shop");
    let mut shown = String::new();
    for args in [
        vec![],
        vec!["-s", "+fct_orders"],
        vec!["-s", "source:*", "--exclude", "raw_balances"],
        vec!["-s", "tag:nonexistent_tag_xyz"],
        vec!["-s", "fct_orders", "--format", "json"],
    ] {
        let out = run(sqb().arg("--project-dir").arg(&shop).arg("ls").args(&args));
        shown.push_str(&format!(
            "$ {}\n",
            ["sqb", "ls"]
                .iter()
                .chain(&args)
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        ));
        shown.push_str(&transcript(&out, &shop));
    }
    insta::assert_snapshot!(shown);
}
