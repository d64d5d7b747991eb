//! Fault injection through the imports.
