// tiny-pm answers `--version`, and initialize with a canned result (its
// requests are read line by line; only the id is taken from each). It is a
// stand-in acquired by cargo install in tests, not a real PM.
use std::io::{self, BufRead, Write};

fn id_of(line: &str) -> &str {
    let Some(start) = line.find("\"id\":") else { return "null" };
    let rest = &line[start + 5..];
    let end = rest.find(|c| c == ',' || c == '}').unwrap_or(rest.len());
    rest[..end].trim()
}

fn main() {
    if std::env::args().any(|a| a == "--version") {
        println!("tiny-pm {}", env!("CARGO_PKG_VERSION"));
        return;
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let id = id_of(&line);
        let body = if line.contains("\"method\":\"initialize\"") {
            format!("\"result\":{{\"protocol_version\":1,\"name\":\"tiny\",\"capabilities\":[],\"version\":\"{}\"}}", env!("CARGO_PKG_VERSION"))
        } else {
            "\"error\":{\"code\":-32601,\"message\":\"tiny-pm only answers initialize\"}".to_string()
        };
        let _ = writeln!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{},{}}}", id, body);
        let _ = out.flush();
    }
}
