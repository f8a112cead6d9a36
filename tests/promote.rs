//! `sqb promote` against a real PostgreSQL server and real DuckDB files (testdata/promote): a
//! good promote leaves every dependent answering with the new rows and the destination's
//! catalog exactly as it was; a failed check, a refused target, a lock not granted, a killed
//! client or a terminated session leave the warehouse exactly as it was (compared with
//! `pg_dump`, schema and data).

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;

fn project(engine: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    case_project(&repo().join("testdata/promote"), engine, tmp.path());
    tmp
}

fn promote(root: &Path, url: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = sqb();
    cmd.arg("--project-dir")
        .arg(root)
        .args(["promote", "--from", "staging"])
        .args(args);
    if let Some(url) = url {
        cmd.env("SQB_DATABASE_URL", url);
    }
    run(&mut cmd)
}

/// The whole database as `pg_dump` writes it: schema, data, sequences, grants, owners. The
/// `\restrict` lines carry a key drawn per run, and are left out.
fn dump(url: &str) -> String {
    pg_dump(url, &[])
}

/// The schema of everything but the staging namespace, whose tables a swap moves into place.
fn published_schema(url: &str) -> String {
    pg_dump(url, &["--schema-only", "--exclude-schema=staging"])
}

fn pg_dump(url: &str, args: &[&str]) -> String {
    let out = Command::new("pg_dump")
        .args(["--no-sync", "--dbname", url])
        .args(args)
        .output()
        .expect("pg_dump runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("\\restrict") && !l.starts_with("\\unrestrict"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Asserts that two dumps are the same, showing the first lines where they part.
#[track_caller]
fn same(actual: &str, expected: &str, context: &str) {
    if actual == expected {
        return;
    }
    let (a, e): (Vec<&str>, Vec<&str>) = (actual.lines().collect(), expected.lines().collect());
    let at = a.iter().zip(&e).take_while(|(x, y)| x == y).count();
    let from = at.saturating_sub(3);
    panic!(
        "{context}: the warehouse changed at line {at}\n--- now\n{}\n--- before\n{}",
        a[from..(at + 5).min(a.len())].join("\n"),
        e[from..(at + 5).min(e.len())].join("\n")
    );
}

fn warehouse(test: &str) -> Option<TestDb> {
    let db = TestDb::create(test)?;
    let sql = case_warehouse(&repo().join("testdata/promote"), "postgres").unwrap();
    pg_exec(&db.url, &sql);
    Some(db)
}

fn expect(out: &Output, code: i32, root: &Path) -> String {
    let text = transcript(out, root);
    assert_eq!(out.status.code(), Some(code), "{text}");
    text
}

#[test]
fn a_promote_publishes_and_everything_bound_stays_bound() {
    let Some(db) = warehouse("promote_good") else {
        return;
    };
    let url = db.url.as_str();
    let root = project("postgres");
    let schema = published_schema(url);
    let out = promote(root.path(), Some(url), &["--to", "prod"]);
    let text = expect(&out, 0, root.path());
    assert!(text.contains("published 3 relations"), "{text}");
    assert!(
        text.contains("publish prod.customer: copy in place (foreign key film_curator_id_fkey of prod.film references it)"),
        "{text}"
    );
    assert!(
        text.contains("publish prod.payment: copy in place (it is partitioned)"),
        "{text}"
    );
    assert!(
        text.contains("publish prod.film: swap (only views read it)"),
        "{text}"
    );
    assert!(
        text.contains("`prod.customer_emails` was never populated"),
        "{text}"
    );

    // The rows are the staged ones, the BEFORE trigger did not rewrite them, and the
    // generated column was computed by the destination.
    assert_eq!(
        pg_strings(
            url,
            "SELECT concat_ws('|', customer_id, email, full_name, last_update AT TIME ZONE 'UTC') FROM prod.customer ORDER BY 1"
        ),
        [
            "1|ann@new.org|Ann Lee|2026-03-01 10:00:00",
            "2|bo@x.org|Bo Ng|2026-03-01 10:00:00",
            "4|di@x.org|Di Park|2026-03-01 10:00:00",
            "5|ed@x.org|Ed Ruiz|2026-03-01 10:00:00",
        ]
    );
    // Every dependent answers with the new rows: the view, the materialized view over it, the
    // function typed by the table's row, the partitioned table's foreign key.
    assert_eq!(
        pg_strings(
            url,
            "SELECT email FROM prod.customer_list WHERE customer_id = 1"
        ),
        ["ann@new.org"]
    );
    assert_eq!(
        pg_strings(url, "SELECT customers::text FROM prod.customer_count"),
        ["4"]
    );
    assert_eq!(
        pg_strings(url, "SELECT last_name FROM prod.customers_named('Di')"),
        ["Park"]
    );
    assert_eq!(
        pg_strings(
            url,
            "SELECT payment_id || ':' || customer_id FROM prod.payment ORDER BY 1"
        ),
        ["1:1", "2:2", "3:4"]
    );
    assert_eq!(
        pg_strings(
            url,
            "SELECT relispopulated::text FROM pg_class WHERE relname = 'customer_emails'"
        ),
        ["false"]
    );
    // The sequence is past the published keys, and the trigger fires again.
    assert_eq!(
        pg_strings(
            url,
            "INSERT INTO prod.customer (first_name, last_name) VALUES ('Fi', 'Xu') RETURNING customer_id || ':' || (last_update > '2026-06-01')"
        ),
        ["6:true"]
    );
    pg_exec(url, "DELETE FROM prod.customer WHERE customer_id = 6");
    // A foreign key into the table still guards it.
    assert!(pg_try_exec(
        url,
        "INSERT INTO prod.payment VALUES (9, 99, 1, '2026-01-09')"
    )
    .is_err());
    // The swapped table: every view over it (with its options, its check option, a view over
    // it and a materialized view over that) reads the new rows.
    assert_eq!(
        pg_strings(
            url,
            "SELECT title || ':' || rating FROM prod.film_list ORDER BY film_id"
        ),
        ["Alien:R", "Casablanca:PG", "Dune:PG"]
    );
    assert_eq!(
        pg_strings(url, "SELECT title FROM prod.cheap_films ORDER BY 1"),
        ["Alien", "Dune"]
    );
    assert_eq!(
        pg_strings(
            url,
            "SELECT string_agg(title, ',' ORDER BY title) FROM prod.film_titles"
        ),
        ["Alien,Casablanca,Dune"]
    );
    assert_eq!(
        pg_strings(url, "SELECT films::text FROM prod.film_count"),
        ["3"]
    );
    assert_eq!(
        pg_strings(
            url,
            "SELECT coalesce(to_regclass('staging.film')::text, 'moved')"
        ),
        ["moved"]
    );
    // Its sequence is past the published keys; the enabled trigger fires, the disabled one
    // does not; its foreign key out, its UNIQUE and its CHECK still guard it.
    assert_eq!(
        pg_strings(
            url,
            "INSERT INTO prod.film (title, last_update) VALUES ('Fargo', '2020-01-01') RETURNING film_id || ':' || rental_rate || ':' || last_update::date"
        ),
        ["5:4.99:2020-01-01"]
    );
    assert_eq!(
        pg_strings(
            url,
            "UPDATE prod.film SET rating = 'R' WHERE title = 'Fargo' RETURNING (last_update > '2026-06-01')::text"
        ),
        ["true"]
    );
    pg_exec(url, "DELETE FROM prod.film WHERE title = 'Fargo'");
    for bad in [
        "INSERT INTO prod.film (title, curator_id) VALUES ('Gilda', 99)",
        "INSERT INTO prod.film (title) VALUES ('Alien')",
        "INSERT INTO prod.film (title, rating) VALUES ('Heat', 'X')",
        "INSERT INTO prod.cheap_films (title, rental_rate) VALUES ('Eraserhead', 9)",
    ] {
        assert!(pg_try_exec(url, bad).is_err(), "{bad}");
    }
    // Indexes, constraints, defaults, generated columns, triggers, grants (column grants too),
    // comments and owners, of the tables copied in place and of the one swapped, and every
    // view: all as they were.
    same(
        &published_schema(url),
        &schema,
        "the schema after a promote",
    );
}

#[test]
fn a_failed_check_publishes_nothing() {
    let Some(db) = warehouse("promote_refused") else {
        return;
    };
    let url = db.url.as_str();
    let root = project("postgres");
    let before = dump(url);
    let cases: &[(&str, &str, &str)] = &[
        (
            "INSERT INTO staging.customer VALUES (2, 'Bo', 'Ng', NULL, 'Bo Ng', now())",
            "audit `unique` on `customer_id`: 1 failing row",
            "DELETE FROM staging.customer WHERE customer_id = 2 AND email IS NULL",
        ),
        (
            "ALTER TABLE staging.customer ALTER COLUMN customer_id TYPE bigint",
            "contract: ",
            "ALTER TABLE staging.customer ALTER COLUMN customer_id TYPE integer",
        ),
        (
            "INSERT INTO prod.rental VALUES (99, 3)",
            "rows of `prod.rental` reference keys the staged copy does not have (foreign key `rental_customer_id_fkey`): 1",
            "DELETE FROM prod.rental WHERE customer_id = 3",
        ),
        (
            "ALTER TABLE staging.customer ADD COLUMN extra integer",
            "refused staging.customer: contract: column `extra` is in the relation but not declared",
            "ALTER TABLE staging.customer DROP COLUMN extra",
        ),
        (
            "ALTER TABLE prod.customer ADD COLUMN legacy integer",
            "refused prod.customer: the staged copy has no column `legacy`, which the destination has",
            "ALTER TABLE prod.customer DROP COLUMN legacy",
        ),
    ];
    for (break_it, said, mend) in cases {
        pg_exec(url, break_it);
        let broken = dump(url);
        let out = promote(root.path(), Some(url), &["--to", "prod"]);
        let text = expect(&out, 1, root.path());
        assert!(text.contains(said), "{break_it}\n{text}");
        assert!(text.contains("nothing was published into `prod`"), "{text}");
        same(&dump(url), &broken, break_it);
        pg_exec(url, mend);
    }
    // Published alone, the staged films reference a customer (4) that only the staged
    // customers have: refused by a count, before anything is written.
    let out = promote(root.path(), Some(url), &["--to", "prod", "-s", "film"]);
    let text = expect(&out, 1, root.path());
    assert!(
        text.contains("refused prod.film: rows of the staged copy reference keys `prod.customer` does not have (foreign key `film_curator_id_fkey`): 1"),
        "{text}"
    );
    same(&dump(url), &before, "a parent's key missing");
    // A staged copy that breaks a constraint the swap makes again on it (no audit checks the
    // title): by then the swap has renamed the destination, moved the copy into place, made
    // the views again and dropped the old table. The statement fails, and all of it rolls back.
    pg_exec(
        url,
        "INSERT INTO staging.film VALUES (5, 'Dune', 'G', 1.00, NULL, now())",
    );
    let broken = dump(url);
    let out = promote(root.path(), Some(url), &["--to", "prod"]);
    let text = expect(&out, 2, root.path());
    assert!(
        text.contains("could not create unique index \"film_title_key\""),
        "{text}"
    );
    same(&dump(url), &broken, "a swap failing half way");
    pg_exec(url, "DELETE FROM staging.film WHERE film_id = 5");
    same(&dump(url), &before, "at the end");
}

#[test]
fn only_a_writable_target_is_written_and_a_dry_run_writes_nothing() {
    let Some(db) = warehouse("promote_dry") else {
        return;
    };
    let url = db.url.as_str();
    let root = project("postgres");
    let before = dump(url);
    let out = promote(root.path(), Some(url), &["--to", "mirror"]);
    let text = expect(&out, 2, root.path());
    assert!(text.contains("target `mirror` is not writable"), "{text}");
    assert!(
        text.contains("add `writable = true` under [targets.mirror]"),
        "{text}"
    );

    let out = promote(root.path(), Some(url), &["--to", "prod", "--dry-run"]);
    let text = expect(&out, 0, root.path());
    assert!(
        text.contains("LOCK TABLE \"prod\".\"customer\" IN SHARE ROW EXCLUSIVE MODE;"),
        "{text}"
    );
    assert!(
        text.contains("LOCK TABLE \"prod\".\"film_list\" IN ACCESS EXCLUSIVE MODE;"),
        "{text}"
    );
    assert!(
        text.contains("ALTER TABLE \"staging\".\"film\" SET SCHEMA \"prod\";"),
        "{text}"
    );
    assert!(
        text.contains("REFRESH MATERIALIZED VIEW \"prod\".\"customer_count\";"),
        "{text}"
    );
    assert!(text.contains("nothing was changed"), "{text}");

    // The strategy, chosen: a copy of every table, or a swap of every one, which refuses
    // those bound by more than views.
    let out = promote(
        root.path(),
        Some(url),
        &["--to", "prod", "--dry-run", "--strategy", "copy"],
    );
    let text = expect(&out, 0, root.path());
    assert!(
        text.contains("publish prod.film: copy in place (--strategy copy)"),
        "{text}"
    );
    assert!(!text.contains("SET SCHEMA"), "{text}");
    let out = promote(
        root.path(),
        Some(url),
        &["--to", "prod", "--strategy", "swap"],
    );
    let text = expect(&out, 1, root.path());
    assert!(
        text.contains("refused prod.customer: --strategy swap: it cannot be swapped: foreign key film_curator_id_fkey of prod.film references it"),
        "{text}"
    );
    assert!(
        text.contains(
            "refused prod.payment: --strategy swap: it cannot be swapped: it is partitioned"
        ),
        "{text}"
    );
    same(&dump(url), &before, "at the end");
}

/// A session of the test's own that holds locks until released (or dropped): it runs `sql`
/// in a transaction, says so, and rolls back when told.
struct Holder {
    release: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Holder {
    fn hold(url: &str, sql: &'static [&'static str]) -> Holder {
        let (ready_tx, ready_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let url = url.to_string();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                use sqlx::Connection;
                let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
                sqlx::raw_sql("BEGIN").execute(&mut conn).await.unwrap();
                for s in sql {
                    sqlx::raw_sql(s).execute(&mut conn).await.unwrap();
                }
                ready_tx.send(()).unwrap();
                let _ = release_rx.recv();
                sqlx::raw_sql("ROLLBACK").execute(&mut conn).await.unwrap();
            });
        });
        ready_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the holder holds");
        Holder {
            release: Some(release_tx),
            thread: Some(thread),
        }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        self.release.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A role that may change the rows but cannot act as the tables' owner: the dry run refuses
/// what the publish could not do (disable a trigger, refresh a materialized view) instead of
/// planning it, the publish refuses it before writing, and the rights it then gets are the
/// only refusals left.
#[test]
fn a_dry_run_refuses_what_the_sessions_rights_would_not_let_the_publish_do() {
    let Some(db) = warehouse("promote_rights") else {
        return;
    };
    let role = format!("sqb_promoter_{}", std::process::id());
    pg_exec(
        &db.url,
        &format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD 'pw';
             GRANT USAGE ON SCHEMA staging, prod, raw TO {role};
             GRANT SELECT ON ALL TABLES IN SCHEMA raw TO {role};
             GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA staging, prod TO {role};
             GRANT ALL ON ALL SEQUENCES IN SCHEMA staging, prod TO {role};"
        ),
    );
    let url = db.url.replace("sqb_test:sqb_test@", &format!("{role}:pw@"));
    let root = project("postgres");
    let before = dump(&db.url);
    let refused = [
        "refused prod.customer: this session cannot act as its owner sqb_promote_owner, as disabling its trigger `customer_touch` while the rows are copied needs",
        "refused prod.film: this session cannot act as its owner sqb_promote_owner, as disabling its trigger `film_touch` while the rows are copied needs",
        "refused prod.customer_count: this session cannot act as its owner sqb_test, as refreshing it after the publish needs",
    ];
    let dry = promote(root.path(), Some(&url), &["--to", "prod", "--dry-run"]);
    let dry = expect(&dry, 1, root.path());
    let real = promote(root.path(), Some(&url), &["--to", "prod"]);
    let real = expect(&real, 1, root.path());
    let after = dump(&db.url);
    // A member of the owning role, owning the staged film, whose views are the owner's too:
    // the film can be swapped.
    pg_exec(
        &db.url,
        &format!(
            "GRANT sqb_promote_owner TO {role}; ALTER TABLE staging.film OWNER TO {role};
             GRANT CREATE ON SCHEMA prod TO {role}; REVOKE ALL ON prod.film FROM {role};
             SET ROLE sqb_promote_owner;
             GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON prod.film TO {role};
             RESET ROLE;
             ALTER VIEW prod.film_list OWNER TO sqb_promote_owner;
             ALTER VIEW prod.cheap_films OWNER TO sqb_promote_owner;
             ALTER VIEW prod.film_titles OWNER TO sqb_promote_owner;"
        ),
    );
    let member = promote(root.path(), Some(&url), &["--to", "prod", "--dry-run"]);
    let member = expect(&member, 1, root.path());
    // A member that does not inherit its roles' rights cannot act as the owner without `SET
    // ROLE`: neither a swap (which renames and drops the table) nor a copy that disables its
    // triggers is planned for it.
    pg_exec(&db.url, &format!("ALTER ROLE {role} NOINHERIT"));
    let noinherit = promote(root.path(), Some(&url), &["--to", "prod", "--dry-run"]);
    let noinherit = expect(&noinherit, 1, root.path());
    pg_exec(&db.url, &format!("DROP OWNED BY {role}"));
    drop(db);
    pg_exec(
        &postgres_url().unwrap(),
        &format!("DROP ROLE IF EXISTS {role}"),
    );
    for line in refused {
        assert!(dry.contains(line), "{dry}");
        assert!(real.contains(line), "{real}");
    }
    assert!(!dry.contains("would be published"), "{dry}");
    same(&after, &before, "a publish refused for its rights");
    // A member of the owning role acts as it; the materialized views are another's.
    assert!(!member.contains("refused prod.customer:"), "{member}");
    assert!(!member.contains("refused prod.film:"), "{member}");
    assert!(member.contains(refused[2]), "{member}");
    for line in &refused[..2] {
        assert!(noinherit.contains(line), "{noinherit}");
    }
}

/// The pid of sqb's publish session once it waits on a lock.
fn waiting_publisher(url: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pids = pg_strings(
            url,
            "SELECT pid::text FROM pg_stat_activity WHERE application_name = 'sqb promote' AND wait_event_type = 'Lock'",
        );
        if let Some(pid) = pids.into_iter().next() {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "sqb promote never waited on the lock"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn publisher_gone(url: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pg_strings(
        url,
        "SELECT pid::text FROM pg_stat_activity WHERE application_name = 'sqb promote'",
    )
    .is_empty()
    {
        assert!(Instant::now() < deadline, "the publish session never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What each step of the publish waits on: the staged relation, the destination, a row being
/// updated, a referencing table while it is checked, and a materialized view being refreshed;
/// for the swap, a reader of a view it makes again and of the staged table it renames.
const BLOCKERS: &[&[&str]] = &[
    &["LOCK TABLE staging.customer IN EXCLUSIVE MODE"],
    &["LOCK TABLE prod.customer IN EXCLUSIVE MODE"],
    &["SELECT 1 FROM prod.customer WHERE customer_id = 1 FOR UPDATE"],
    &["LOCK TABLE prod.rental IN ACCESS EXCLUSIVE MODE"],
    &["SELECT count(*) FROM prod.customer_count"],
    &["SELECT count(*) FROM prod.film_list"],
    &["SELECT count(*) FROM staging.film"],
];

#[test]
fn a_lock_not_granted_in_time_is_given_up_and_its_holder_named() {
    let Some(db) = warehouse("promote_lock") else {
        return;
    };
    let url = db.url.as_str();
    let root = project("postgres");
    let before = dump(url);
    let _holder = Holder::hold(url, BLOCKERS[1]);
    let out = promote(
        root.path(),
        Some(url),
        &["--to", "prod", "--lock-timeout", "1"],
    );
    let text = expect(&out, 2, root.path());
    assert!(
        text.contains("gave up waiting 1s for a lock on `prod.customer`: held by pid "),
        "{text}"
    );
    assert!(text.contains("ExclusiveLock"), "{text}");
    drop(_holder);
    same(&dump(url), &before, "at the end");
}

/// SIGKILL of the client, and the session terminated by the server, while the publish waits
/// at each step: prod is exactly as before. Then, unhindered, it is exactly as after.
#[test]
fn a_publish_killed_or_cut_off_at_any_step_leaves_prod_as_it_was() {
    let Some(db) = warehouse("promote_fault") else {
        return;
    };
    let url = db.url.as_str();
    let root = project("postgres");
    let before = dump(url);
    for blocker in BLOCKERS {
        for fault in ["kill", "terminate"] {
            let holder = Holder::hold(url, blocker);
            let mut cmd = sqb();
            cmd.arg("--project-dir")
                .arg(root.path())
                .args([
                    "promote",
                    "--from",
                    "staging",
                    "--to",
                    "prod",
                    "--lock-timeout",
                    "60",
                ])
                .env("SQB_DATABASE_URL", url)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            let pid = waiting_publisher(url);
            match fault {
                "kill" => {
                    child.kill().unwrap();
                    child.wait().unwrap();
                }
                _ => {
                    pg_exec(url, &format!("SELECT pg_terminate_backend({pid})"));
                    let out = child.wait_with_output().unwrap();
                    let text = expect(&out, 2, root.path());
                    assert!(
                        text.contains("lost during the publish"),
                        "{blocker:?}\n{text}"
                    );
                }
            }
            drop(holder);
            publisher_gone(url);
            same(
                &dump(url),
                &before,
                &format!("{fault} while waiting on {blocker:?}"),
            );
        }
    }
    let out = promote(root.path(), Some(url), &["--to", "prod"]);
    expect(&out, 0, root.path());
    assert_ne!(dump(url), before);
}

/// Readers of the dependent views during a publish (held open at its last step) see the old
/// rows or the new ones, never an error and never an empty result: those of a view over a
/// table copied in place, and those of a view over the table swapped, which wait for the swap
/// to commit and then read the new table.
#[test]
fn readers_never_see_an_error_or_an_empty_result() {
    let Some(db) = warehouse("promote_readers") else {
        return;
    };
    let url = db.url.clone();
    let root = project("postgres");
    let holder = Holder::hold(&url, BLOCKERS[4]);
    let mut cmd = sqb();
    cmd.arg("--project-dir")
        .arg(root.path())
        .args(["promote", "--from", "staging", "--to", "prod"])
        .env("SQB_DATABASE_URL", &url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    waiting_publisher(&url);
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let readers: Vec<_> = [
        "SELECT count(*)::text FROM prod.customer_list WHERE full_name IS NOT NULL",
        "SELECT coalesce(string_agg(title, ',' ORDER BY title), 'none') FROM prod.film_list",
        "SELECT coalesce(string_agg(title, ',' ORDER BY title), 'none') FROM prod.film_titles",
    ]
    .into_iter()
    .map(|sql| {
        let reader_url = url.clone();
        let (seen_tx, seen_rx) = mpsc::channel::<String>();
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let rows = pg_strings(&reader_url, sql);
                if seen_tx.send(rows[0].clone()).is_err() || Instant::now() > deadline {
                    break;
                }
            }
        });
        (seen_rx, thread)
    })
    .collect();
    std::thread::sleep(Duration::from_millis(500));
    drop(holder);
    let out = child.wait_with_output().unwrap();
    expect(&out, 0, root.path());
    std::thread::sleep(Duration::from_millis(300));
    drop(stop_rx);
    drop(stop_tx);
    let mut seen: Vec<Vec<String>> = Vec::new();
    for (rx, thread) in readers {
        // The last answers: the reader stops once nobody listens.
        let got: Vec<String> = rx.try_iter().collect();
        drop(rx);
        thread.join().expect("a reader saw no error");
        seen.push(got);
    }
    let allowed: [&[&str]; 3] = [
        &["3", "4"],
        &["Alien,Bambi,Casablanca", "Alien,Casablanca,Dune"],
        &["Alien,Bambi,Casablanca", "Alien,Casablanca,Dune"],
    ];
    for (got, allowed) in seen.iter().zip(allowed) {
        assert!(!got.is_empty());
        assert!(got.iter().all(|n| allowed.contains(&n.as_str())), "{got:?}");
        assert_eq!(got.last().map(String::as_str), Some(allowed[1]), "{got:?}");
    }
    assert_eq!(
        pg_strings(&url, "SELECT customers::text FROM prod.customer_count"),
        ["4"]
    );
}

/// The DuckDB file's tables, every row, as text.
fn duck_rows(path: &Path) -> Vec<String> {
    let conn = duckdb::Connection::open(path).unwrap();
    let mut out = Vec::new();
    for table in ["customer", "payment"] {
        let mut s = conn
            .prepare(&format!(
                "SELECT CAST(t AS VARCHAR) FROM prod.{table} AS t ORDER BY ALL"
            ))
            .unwrap();
        let rows = s.query_map([], |r| r.get::<_, String>(0)).unwrap();
        out.extend(rows.map(|r| format!("{table}: {}", r.unwrap())));
    }
    out
}

#[test]
fn duckdb_publishes_in_place_in_one_transaction() {
    let root = project("duckdb");
    let file = root.path().join("w.duckdb");
    duckdb_file(
        &file,
        &case_warehouse(&repo().join("testdata/promote"), "duckdb").unwrap(),
    );
    let dry = promote(root.path(), None, &["--to", "prod", "--dry-run"]);
    expect(&dry, 0, root.path());
    insta::assert_snapshot!("duckdb_dry_run", String::from_utf8_lossy(&dry.stdout));
    let swap = promote(root.path(), None, &["--to", "prod", "--strategy", "swap"]);
    let text = expect(&swap, 1, root.path());
    assert!(
        text.contains(
            "refused prod.film: --strategy swap: it cannot be swapped: only Postgres swaps"
        ),
        "{text}"
    );
    let alone = promote(root.path(), None, &["--to", "prod", "-s", "film"]);
    let text = expect(&alone, 1, root.path());
    assert!(
        text.contains("rows of the staged copy reference keys `prod.customer` does not have"),
        "{text}"
    );

    // A staged copy missing a key that a payment references: refused, nothing written.
    duckdb_file(&file, "DELETE FROM staging.customer WHERE customer_id = 2");
    let before = duck_rows(&file);
    let out = promote(root.path(), None, &["--to", "prod", "-s", "customer"]);
    let text = expect(&out, 1, root.path());
    assert!(
        text.contains("rows of `prod.payment` reference keys the staged copy does not have"),
        "{text}"
    );
    assert_eq!(duck_rows(&file), before);
    duckdb_file(
        &file,
        "INSERT INTO staging.customer VALUES (2, 'Bo', 'Ng', 'bo@x.org', 'Bo Ng', '2026-03-01 10:00:00+00')",
    );

    let out = promote(root.path(), None, &["--to", "prod"]);
    expect(&out, 0, root.path());
    let conn = duckdb::Connection::open(&file).unwrap();
    let emails: Vec<String> = conn
        .prepare("SELECT customer_id || ':' || coalesce(email, '-') FROM prod.customer_list ORDER BY customer_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        emails,
        ["1:ann@new.org", "2:bo@x.org", "4:di@x.org", "5:ed@x.org"]
    );
    let next: i64 = conn
        .query_row(
            "INSERT INTO prod.customer (first_name, last_name) VALUES ('Fi', 'Xu') RETURNING customer_id",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(next, 6, "the sequence is past the published keys");
}
