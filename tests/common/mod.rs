//! Helpers shared by the integration tests: running the real `sqb` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `sqb` command with colours off and a clean environment for the variables sqb reads.
pub fn sqb() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sqb"));
    cmd.env_remove("SQB_DATABASE_URL")
        .env_remove("PGPASSWORD")
        .env("NO_COLOR", "1");
    cmd
}

/// Exit code, stdout and stderr in one text for snapshots, with `root` replaced by `[ROOT]`.
pub fn transcript(output: &Output, root: &Path) -> String {
    let clean = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .replace(&root.display().to_string(), "[ROOT]")
            .trim_end()
            .to_string()
    };
    format!(
        "exit: {}\n--- stdout\n{}\n--- stderr\n{}\n",
        output
            .status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        clean(&output.stdout),
        clean(&output.stderr)
    )
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("sqb runs")
}
