//! Rust bindings of the `guard` world, generated from `wit/` by wasmtime.
//! The host speaks only this world; it has no dependency on the core.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "guard",
    additional_derives: [PartialEq, Eq],
});
