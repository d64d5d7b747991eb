use super::*;

#[test]
fn empty_object_gives_the_defaults() {
    let config = Config::parse("{}");
    assert_eq!(config, Ok(Config::default()));
}
