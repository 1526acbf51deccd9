// demo crate
