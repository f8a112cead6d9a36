//! The documentation built from the clap definitions: shell completions that a real bash
//! loads and answers with, man pages for every command, and the environment sections of
//! `--help`.

mod common;

use std::process::Command;

use common::*;

/// Asks bash, with `sqb completions bash` loaded, what completes `words` (the last one being
/// completed).
fn bash_completes(script: &str, words: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sqb.bash");
    std::fs::write(&path, script).unwrap();
    let words_array = words
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let line = words.join(" ");
    let program = format!(
        "source {path}; COMP_WORDS=({words_array}); COMP_CWORD={cword}; COMP_LINE='{line}'; \
         COMP_POINT=${{#COMP_LINE}}; _sqb sqb '{current}' '{previous}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path = path.display(),
        cword = words.len() - 1,
        current = words[words.len() - 1],
        previous = words[words.len() - 2],
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&program)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn bash_completion_loads_and_completes_commands_and_options() {
    let out = run(sqb().args(["completions", "bash"]));
    assert_eq!(out.status.code(), Some(0));
    let script = String::from_utf8(out.stdout).unwrap();
    let syntax = Command::new("bash")
        .arg("-n")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );

    let commands = bash_completes(&script, &["sqb", "co"]);
    for expected in ["compile", "contract", "completions"] {
        assert!(commands.iter().any(|c| c == expected), "{commands:?}");
    }
    let subcommands = bash_completes(&script, &["sqb", "contract", ""]);
    assert!(subcommands.iter().any(|c| c == "diff"), "{subcommands:?}");
    assert!(
        subcommands.iter().any(|c| c == "generate"),
        "{subcommands:?}"
    );
    let options = bash_completes(&script, &["sqb", "contract", "diff", "--fo"]);
    assert!(options.iter().any(|c| c == "--format"), "{options:?}");
    let formats = bash_completes(&script, &["sqb", "contract", "diff", "--format", ""]);
    for expected in ["json", "sarif", "junit"] {
        assert!(formats.iter().any(|c| c == expected), "{formats:?}");
    }
}

#[test]
fn every_shell_gets_a_script_naming_every_command() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = run(sqb().args(["completions", shell]));
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for command in ["init", "compile", "lineage", "query", "assert", "drift"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
    }
    let unknown = run(sqb().args(["completions", "tcsh"]));
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("possible values"));
}

#[test]
fn man_pages_for_every_command() {
    let out = run(sqb().arg("man"));
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH sqb 1"), "{page}");
    assert!(
        page.contains("SQB_DATABASE_URL"),
        "the environment section is missing"
    );

    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let out = run(sqb().arg("man").arg("--dir").arg(&pages));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, dir.path())
    );
    let mut names: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for expected in [
        "sqb.1",
        "sqb-init.1",
        "sqb-contract-diff.1",
        "sqb-contract-generate.1",
        "sqb-imports-verify.1",
        "sqb-drift-report.1",
        "sqb-lineage.1",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in {names:?}"
        );
    }
    let diff = std::fs::read_to_string(pages.join("sqb-contract-diff.1")).unwrap();
    assert!(diff.contains("baseline"), "{diff}");
    insta::assert_snapshot!("man_dir_written", transcript(&out, dir.path()));

    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let refused = run(sqb().arg("man").arg("--dir").arg(&file));
    assert_eq!(refused.status.code(), Some(2));
    insta::assert_snapshot!("man_dir_is_a_file", transcript(&refused, dir.path()));
}

/// The commands that connect say, under their `--help`, which environment variables they read.
#[test]
fn help_names_the_environment() {
    let top = run(sqb().arg("--help"));
    let top = String::from_utf8(top.stdout).unwrap();
    for variable in ["SQB_DATABASE_URL", "PGPASSWORD", "SQB_NO_CACHE", "NO_COLOR"] {
        assert!(top.contains(variable), "sqb --help lacks {variable}");
    }
    for command in [
        &["init"][..],
        &["contract", "diff"],
        &["contract", "generate"],
        &["imports", "verify"],
        &["query"],
        &["assert"],
    ] {
        let out = run(sqb().args(command).arg("--help"));
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(
            help.contains("SQB_DATABASE_URL"),
            "{command:?} --help lacks it"
        );
    }
}

/// Every duration option takes seconds or a humane duration, and says so when it gets neither.
#[test]
fn timeouts_take_humane_durations() {
    let shop = repo().join("examples/shop");
    for args in [
        &["--connect-timeout", "2m", "--statement-timeout", "90s"][..],
        &["--connect-timeout", "30", "--statement-timeout", "1h30m"],
    ] {
        // `--sql` compiles the query offline: the options only have to parse.
        let out = run(sqb()
            .arg("--project-dir")
            .arg(&shop)
            .args([
                "query",
                "-m",
                "revenue",
                "--sql",
                "--claims",
                r#"{"roles": ["analyst"]}"#,
            ])
            .args(args));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            transcript(&out, &shop)
        );
    }
    let bad = run(sqb().arg("--project-dir").arg(&shop).args([
        "contract",
        "diff",
        "--connect-timeout",
        "2mo",
    ]));
    assert_eq!(bad.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&bad, &shop));
}
