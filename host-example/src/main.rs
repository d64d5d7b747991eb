//! `warden`: the command-line host of the Warden guard component.

fn main() {
    let code = warden_host::cli::run(
        std::env::args_os().collect(),
        warden_host::cli::Io {
            stdin: &mut std::io::stdin().lock(),
            stdout: &mut std::io::stdout().lock(),
            stderr: &mut std::io::stderr(),
        },
    );
    std::process::exit(code);
}
