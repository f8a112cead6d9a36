//! `sqb init`: a new project from an existing warehouse; the report on stdout, what to do next
//! on stderr.

use crate::cli::{EngineArg, GlobalArgs, InitArgs, TextOrJson};
use crate::commands::{engine_of, say, stdout, timeouts};
use crate::edit::transaction::TxError;
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::init::{init, InitOptions};
use crate::report::init as printer;

pub fn run(global: &GlobalArgs, args: &InitArgs) -> anyhow::Result<ExitStatus> {
    let options = InitOptions {
        dir: global
            .project_dir
            .as_ref()
            .map_or_else(|| args.dir.clone(), |p| p.join(&args.dir)),
        engine: engine_of(engine(args)?),
        url: args.url.clone(),
        path: args.path.clone(),
        schemas: args.schemas.clone(),
        target: args.target.clone(),
        force: args.force,
        timeouts: timeouts(&args.connect),
    };
    let done = match init(&options) {
        Ok(done) => done,
        Err(err) => match err.downcast_ref::<TxError>() {
            Some(TxError::Interrupted(signal)) => {
                crate::message::eprint(Level::Error, &err.to_string());
                return Ok(ExitStatus::Interrupted(*signal));
            }
            _ => return Err(err),
        },
    };
    stdout(|w| match args.format {
        TextOrJson::Text => printer::emit_text(&done, w),
        TextOrJson::Json => printer::emit_json(&done, w),
    })?;
    if done.password_dropped {
        say(
            global,
            Level::Note,
            "the URL's password was not written to sqb.toml",
        );
        say(
            global,
            Level::Hint,
            "give it to later commands with PGPASSWORD, ~/.pgpass, or the whole URL in SQB_DATABASE_URL",
        );
    }
    if done.warnings > 0 {
        say(
            global,
            Level::Warning,
            &format!(
                "`sqb compile` reports {} on the new project",
                crate::report::count(done.warnings, "warning", "warnings")
            ),
        );
    }
    let cd = match options.dir.as_os_str() == "." {
        true => String::new(),
        false => format!("cd {} && ", options.dir.display()),
    };
    say(
        global,
        Level::Hint,
        &format!(
            "next: `{cd}sqb contract diff` compares every declared relation with the warehouse"
        ),
    );
    Ok(ExitStatus::Success)
}

/// `--engine`, else the engine `--path` (DuckDB) or a URL (Postgres: `--url` or
/// SQB_DATABASE_URL) implies.
fn engine(args: &InitArgs) -> Result<EngineArg, UserError> {
    let url_in_env = std::env::var(crate::ops::DATABASE_URL_ENV).is_ok_and(|u| !u.is_empty());
    match (args.engine, &args.path, &args.url) {
        (Some(engine), _, _) => Ok(engine),
        (None, Some(_), _) => Ok(EngineArg::Duckdb),
        (None, None, Some(_)) => Ok(EngineArg::Postgres),
        (None, None, None) if url_in_env => Ok(EngineArg::Postgres),
        (None, None, None) => Err(UserError::new("which warehouse? no --engine, --url or --path")
            .with_hint("pass --url URL or --engine postgres (the URL from SQB_DATABASE_URL or libpq's PG* variables) for Postgres, or --path FILE for DuckDB")),
    }
}
