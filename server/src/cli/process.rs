//! The process around a command, shared by `zugzwang` and `zugzwang-bench`
//! (whose `serve` must run the very same server): logging, the listening
//! socket systemd passed, the runtime, the grace blocked threads get at
//! exit, and the exit status: 0 when the command did its work, 1 when it
//! failed, [`REQUESTS_CUT`] when `serve` stopped with requests unfinished.

use std::{fmt::Display, future::Future, net::TcpListener, process::ExitCode, time::Duration};

use crate::service::listener;

/// After a command returns, blocking threads still stuck on a dead disk get
/// this long before the process exits without them.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// The exit status of a `serve` whose drain ran out of time (or was cut
/// short by a second signal): the requests still in progress were answered
/// 503 instead of finishing. 75 is `EX_TEMPFAIL` of sysexits.h, "a
/// temporary failure; retry".
pub const REQUESTS_CUT: u8 = 75;

/// A command's failure, printed after the program's name, with the exit
/// status it gives the process (1 unless it says otherwise).
pub trait Failure: Display {
    fn exit_status(&self) -> u8 {
        1
    }
}

/// Runs one command as the whole process: `program` names it in errors;
/// `serves` says whether the command takes a listening socket from
/// systemd, which must be taken before the runtime starts threads (taking
/// it edits the environment).
pub fn run<F, E>(
    program: &str,
    serves: bool,
    command: impl FnOnce(Option<TcpListener>) -> F,
) -> ExitCode
where
    F: Future<Output = Result<(), E>>,
    E: Failure,
{
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tower_http=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let inherited = match serves {
        true => match listener::take_inherited() {
            Ok(inherited) => inherited,
            Err(err) => return fail(program, &err),
        },
        false => None,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => return fail(program, &format!("cannot start the async runtime: {err}")),
    };
    let result = runtime.block_on(command(inherited));
    runtime.shutdown_timeout(EXIT_GRACE);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{program}: {err}");
            ExitCode::from(err.exit_status())
        }
    }
}

fn fail(program: &str, message: &dyn Display) -> ExitCode {
    eprintln!("{program}: {message}");
    ExitCode::FAILURE
}
