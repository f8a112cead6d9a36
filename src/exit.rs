//! Process exit statuses, shared by every command.

use std::process::ExitCode;

/// How a command ended. The numbers are part of the CLI contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// The command succeeded: the project is valid, or declarations agree with the warehouse.
    Success,
    /// The command ran and found problems: an invalid project, or differences.
    Failure,
    /// The command itself failed: usage, I/O, configuration, connection.
    Error,
    /// A semantic query was refused: the status of its refusal code (10–21, docs/semantic-contracts.md).
    Refused(u8),
    /// Stopped by a signal (its number): 130 for Ctrl-C, 143 for SIGTERM, as shells report it.
    Interrupted(i32),
}

impl ExitStatus {
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Error => 2,
            ExitStatus::Refused(code) => code,
            ExitStatus::Interrupted(signal) => crate::interrupt::exit_code(signal),
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        ExitCode::from(status.code())
    }
}
