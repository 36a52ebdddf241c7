//! Language servers from plugins, end to end.
