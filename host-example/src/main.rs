//! `warden`: the command-line host of the Warden guard component.

fn main() {
    let code = warden_host::cli::run(
        std::env::args_os().collect(),
        warden_host::cli::Io {
            // Not locked for the process's life: `warden mcp` reads and writes
            // these streams from its async runtime's threads.
            stdin: &mut std::io::stdin(),
            stdout: &mut std::io::stdout(),
            stderr: &mut std::io::stderr(),
        },
    );
    std::process::exit(code);
}
