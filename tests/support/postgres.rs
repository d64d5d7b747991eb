//! A throwaway PostgreSQL cluster for the tests that share storage between
//! gateways: its own temporary folder, a loopback port, trust auth for one
//! role, stopped (and its folder removed) when dropped.
//!
//! The server binaries are found on `PATH` or under
//! `/usr/lib/postgresql/*/bin`; when there are none and this process is
//! root, Debian's `postgresql` package is installed with `apt-get`. PostgreSQL
//! refuses to run as root, so as root the cluster belongs to the system user
//! [`CLUSTER_USER`] (created when missing) and its commands run through
//! `runuser`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The unprivileged system user a root process runs the cluster as.
pub const CLUSTER_USER: &str = "warden-test";
/// The role the tests connect as.
pub const ROLE: &str = "warden";
/// How long the server may take to start or stop.
const PG_CTL_WAIT: Duration = Duration::from_secs(60);

/// Serializes installation and user creation between tests of one process.
static SETUP: Mutex<()> = Mutex::new(());

fn run(command: &mut Command) -> Output {
    let shown = format!("{command:?}");
    let output = command.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        output.status.success(),
        "{shown} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The folder holding `initdb`, `pg_ctl` and `psql`.
fn find_binaries() -> Option<PathBuf> {
    let has_all = |dir: &Path| ["initdb", "pg_ctl", "psql", "postgres"].iter().all(|b| dir.join(b).is_file());
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut versions: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path().join("bin")).collect();
        versions.sort();
        versions.reverse();
        candidates.extend(versions);
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path));
    }
    candidates.into_iter().find(|d| has_all(d))
}

/// The server binaries, installed from Debian's packages when missing.
pub fn binaries() -> PathBuf {
    let _setup = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(dir) = find_binaries() {
        return dir;
    }
    assert!(is_root(), "PostgreSQL is not installed and this process cannot install it: apt-get install postgresql");
    eprintln!("PostgreSQL is not installed: installing Debian's `postgresql` package");
    let _ = Command::new("apt-get").arg("update").stdin(Stdio::null()).status();
    run(Command::new("apt-get")
        .args(["install", "-y", "--no-install-recommends", "postgresql"])
        .env("DEBIAN_FRONTEND", "noninteractive"));
    find_binaries().expect("apt-get installed postgresql, but initdb, pg_ctl and psql are still not found")
}

fn ensure_user() {
    let _setup = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    if Command::new("id")
        .arg(CLUSTER_USER)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        return;
    }
    let made = Command::new("useradd")
        .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", CLUSTER_USER])
        .stdin(Stdio::null())
        .output()
        .expect("useradd");
    // Another test process may have created it meanwhile.
    let exists = Command::new("id")
        .arg(CLUSTER_USER)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(exists, "cannot create the user {CLUSTER_USER}: {}", String::from_utf8_lossy(&made.stderr));
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// A running cluster.
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    root: bool,
}

impl Postgres {
    /// Creates and starts a cluster.
    pub fn start() -> Postgres {
        let bin = binaries();
        let root = is_root();
        if root {
            ensure_user();
        }
        let dir = tempfile::Builder::new().prefix("warden-pg-").tempdir().expect("a temporary folder");
        let cluster = Postgres { dir, bin, port: free_port(), root };
        if root {
            run(Command::new("chown").arg(CLUSTER_USER).arg(cluster.dir.path()));
        }
        let data = cluster.data();
        run(cluster
            .as_owner("initdb")
            .args(["--auth=trust", "--encoding=UTF8", "--no-sync", "-U", ROLE, "-D"])
            .arg(&data));
        cluster.resume_server();
        cluster
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A command running `program` of the server's binaries as the cluster's owner.
    fn as_owner(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.root {
            let mut command = Command::new("runuser");
            command.args(["-u", CLUSTER_USER, "--"]).arg(path);
            command
        } else {
            Command::new(path)
        }
    }

    /// Starts the (stopped) server again on the same port.
    pub fn resume_server(&self) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        run(self
            .as_owner("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.path().join("server.log"))
            .args(["-o", &options, "-w", "-t", &PG_CTL_WAIT.as_secs().to_string(), "start"]));
    }

    /// Stops the server at once (`immediate`: open transactions are cut, as a crash would).
    pub fn stop_server(&self) {
        run(self.as_owner("pg_ctl").arg("-D").arg(self.data()).args(["-m", "immediate", "-w", "stop"]));
    }

    /// The URL of a database of this cluster.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{ROLE}@127.0.0.1:{}/{database}", self.port)
    }

    /// Creates a database and returns its URL.
    pub fn database(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE \"{name}\""));
        self.url(name)
    }

    /// Runs `sql` in `database` with `psql`; its output, one row a line, columns split by `|`.
    pub fn sql(&self, database: &str, sql: &str) -> String {
        let output = run(Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", ROLE, "-p"])
            .arg(self.port.to_string())
            .args(["-d", database, "-c", sql]));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The postmaster's process id.
    pub fn pid(&self) -> i32 {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).expect("postmaster.pid");
        text.lines().next().and_then(|l| l.trim().parse().ok()).expect("a pid in postmaster.pid")
    }

    /// The server's process ids: the postmaster and every backend.
    pub fn processes(&self) -> Vec<i32> {
        let postmaster = self.pid();
        let mut pids = vec![postmaster];
        let children = Command::new("pgrep").args(["-P", &postmaster.to_string()]).output();
        if let Ok(children) = children {
            pids.extend(String::from_utf8_lossy(&children.stdout).lines().filter_map(|l| l.trim().parse::<i32>().ok()));
        }
        pids
    }

    /// Sends `signal` (`STOP`, `CONT`) to every process of the server.
    pub fn signal(&self, signal: &str) {
        for pid in self.processes() {
            let _ = Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()).status();
        }
    }

    /// Waits until the server accepts connections again.
    pub fn wait_ready(&self) {
        let deadline = Instant::now() + PG_CTL_WAIT;
        while Instant::now() < deadline {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("PostgreSQL did not come back within {PG_CTL_WAIT:?}");
    }

    /// One cluster for the whole test process, started on first use and
    /// stopped (its folder removed) by a watcher process once this process
    /// has exited, however it exits.
    pub fn shared() -> &'static Postgres {
        static SHARED: std::sync::OnceLock<Postgres> = std::sync::OnceLock::new();
        SHARED.get_or_init(|| {
            let cluster = Postgres::start();
            let stop = format!(
                "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; {owner} {pg_ctl} -D {data} -m immediate stop; rm -rf {dir}",
                pid = std::process::id(),
                owner = if cluster.root { format!("runuser -u {CLUSTER_USER} --") } else { String::new() },
                pg_ctl = cluster.bin.join("pg_ctl").display(),
                data = cluster.data().display(),
                dir = cluster.dir.path().display(),
            );
            let _ = Command::new("sh")
                .args(["-c", &stop])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            cluster
        })
    }

    /// A new database of its own in the shared cluster, for one test.
    pub fn fresh_database(label: &str) -> String {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("{label}_{}", NEXT.fetch_add(1, Ordering::SeqCst));
        Postgres::shared().database(&name)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // A paused server cannot stop.
        self.signal("CONT");
        let _ = self
            .as_owner("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
