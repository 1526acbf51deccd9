fn main() { println!("demo"); }
