//! Kubernetes' own CEL libraries, which kube-apiserver adds to CEL for CRD rules and admission
//! policies: lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`,
//! `findAll`), sets (`sets.contains`, `sets.equivalent`, `sets.intersects`), `quantity`, `url`,
//! `ip`/`cidr`, `semver` and named formats ([`lists`], [`regex`], [`sets`], [`quantity`],
//! [`net`], [`semver`], [`format`]), and CEL's two-variable comprehensions
//! ([`comprehensions`]). A rule calling them is enforced as kube enforces it.
//!
//! Each function is written over cel-rust's [`Value`]s (`fn(&[Value]) -> Result<Value, String>`,
//! the receiver first) and registered as an overload of the environment through a small
//! adapter, so the interpreter dispatches them like its own.

mod comprehensions;
mod format;
mod lists;
mod net;
mod quantity;
mod regex;
mod semver;
mod sets;

use cel::common::types::{DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError, Value};

/// A library function: the receiver (for a member function) and arguments, in order.
type Lib = fn(&[Value]) -> Result<Value, String>;

/// Turns a [`Lib`] function into the interpreter's function type (a plain `fn`, so each
/// library function gets its own adapter).
macro_rules! adapt {
    ($name:expr, $f:expr) => {{
        fn adapted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
            let values = args
                .iter()
                .map(|a| Value::try_from(a.as_ref()))
                .collect::<Result<Vec<Value>, ExecutionError>>()?;
            let f: Lib = $f;
            let out = f(&values).map_err(|e| ExecutionError::function_error($name, e))?;
            let boxed: Box<dyn Val> = Box::<dyn Val>::try_from(out)?;
            Ok(CowVal::from(boxed as Box<dyn Val + 'v>))
        }
        adapted
    }};
}

/// Registers global functions: `(name, overload id, library fn)`, each taking `args`.
macro_rules! functions {
    ($env:expr, $args:tt, $(($name:expr, $id:expr, $f:expr)),+ $(,)?) => {$(
        $env.add_overload($name, $id, vec!$args, adapt!($name, $f))?;
    )+};
}

/// Registers member functions of `target`: `(name, overload id, library fn)`, each taking
/// `args` after the receiver.
macro_rules! members {
    ($env:expr, $target:expr, $args:tt, $(($name:expr, $id:expr, $f:expr)),+ $(,)?) => {$(
        $env.add_member_overload($name, $id, $target, vec!$args, adapt!($name, $f))?;
    )+};
}

/// Add Kubernetes' libraries to `env`.
pub(crate) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    comprehensions::extension(env)?;
    // Lists.
    members!(
        env,
        LIST_TYPE,
        [],
        ("isSorted", "list_is_sorted", lists::is_sorted),
        ("sum", "list_sum", lists::sum),
        ("min", "list_min", lists::min),
        ("max", "list_max", lists::max),
    );
    members!(
        env,
        LIST_TYPE,
        [DYN_TYPE],
        ("indexOf", "list_index_of", lists::index_of),
        ("lastIndexOf", "list_last_index_of", lists::last_index_of),
    );
    // Regex.
    members!(
        env,
        STRING_TYPE,
        [STRING_TYPE],
        ("find", "string_find_string", regex::find),
        ("findAll", "string_find_all_string", regex::find_all),
    );
    members!(
        env,
        STRING_TYPE,
        [STRING_TYPE, INT_TYPE],
        ("findAll", "string_find_all_string_int", regex::find_all),
    );
    // Sets.
    functions!(
        env,
        [LIST_TYPE, LIST_TYPE],
        ("sets.contains", "sets.contains_list_list", sets::contains),
        (
            "sets.equivalent",
            "sets.equivalent_list_list",
            sets::equivalent
        ),
        (
            "sets.intersects",
            "sets.intersects_list_list",
            sets::intersects
        ),
    );
    // Quantity.
    functions!(
        env,
        [STRING_TYPE],
        ("quantity", "string_to_quantity", quantity::parse),
        ("isQuantity", "is_quantity_string", quantity::is_quantity),
    );
    members!(
        env,
        DYN_TYPE,
        [],
        ("sign", "quantity_sign", quantity::sign),
        (
            "asApproximateFloat",
            "quantity_get_float",
            quantity::as_float
        ),
        ("asInteger", "quantity_get_int", quantity::as_integer),
        ("isInteger", "quantity_is_integer", quantity::is_integer),
    );
    members!(
        env,
        DYN_TYPE,
        [DYN_TYPE],
        ("isGreaterThan", "quantity_is_greater_than", is_greater_than),
        ("isLessThan", "quantity_is_less_than", is_less_than),
        ("compareTo", "quantity_compare_to", compare_to),
        ("add", "quantity_add", quantity::add),
        ("sub", "quantity_sub", quantity::sub),
    );
    // URLs, IPs, CIDRs.
    functions!(
        env,
        [STRING_TYPE],
        ("url", "string_to_url", net::url),
        ("isURL", "is_url_string", net::is_url),
    );
    members!(
        env,
        DYN_TYPE,
        [],
        ("getScheme", "url_get_scheme", net::get_scheme),
        ("getHost", "url_get_host", net::get_host),
        ("getHostname", "url_get_hostname", net::get_hostname),
        ("getPort", "url_get_port", net::get_port),
        (
            "getEscapedPath",
            "url_get_escaped_path",
            net::get_escaped_path
        ),
        ("getQuery", "url_get_query", net::get_query),
        ("family", "ip_family", net::family),
        ("isUnspecified", "ip_is_unspecified", net::is_unspecified),
        ("isLoopback", "ip_is_loopback", net::is_loopback),
        (
            "isGlobalUnicast",
            "ip_is_global_unicast",
            net::is_global_unicast
        ),
        (
            "isLinkLocalUnicast",
            "ip_is_link_local_unicast",
            net::is_link_local_unicast
        ),
        (
            "isLinkLocalMulticast",
            "ip_is_link_local_multicast",
            net::is_link_local_multicast
        ),
        ("prefixLength", "cidr_prefix_length", net::prefix_length),
        ("masked", "cidr_masked", net::masked),
        ("ip", "cidr_ip", net::cidr_ip),
    );
    functions!(
        env,
        [STRING_TYPE],
        ("ip", "string_to_ip", net::ip),
        ("isIP", "is_ip", net::is_ip),
        ("ip.isCanonical", "ip_is_canonical", net::is_canonical),
        ("cidr", "string_to_cidr", net::cidr),
        ("isCIDR", "is_cidr", net::is_cidr),
    );
    members!(
        env,
        DYN_TYPE,
        [DYN_TYPE],
        ("containsIP", "cidr_contains_ip", net::contains_ip),
        ("containsCIDR", "cidr_contains_cidr", net::contains_cidr),
    );
    // Named formats: `format.<name>()` for each name `format.named` knows.
    macro_rules! named_format {
        ($($n:literal),*) => {$(
            functions!(
                env,
                [],
                (concat!("format.", $n), concat!("format-", $n), |_: &[Value]| Ok(format::named_constant($n))),
            );
        )*};
    }
    format::with_format_names!(named_format);
    functions!(
        env,
        [STRING_TYPE],
        ("format.named", "format-named", format::named)
    );
    members!(
        env,
        DYN_TYPE,
        [STRING_TYPE],
        ("validate", "format-validate", format::validate),
    );
    // Semantic versions.
    functions!(
        env,
        [STRING_TYPE],
        ("semver", "string_to_semver", semver::parse),
        ("isSemver", "is_semver_string", semver::is_semver),
    );
    members!(
        env,
        DYN_TYPE,
        [],
        ("major", "semver_major", semver::major),
        ("minor", "semver_minor", semver::minor),
        ("patch", "semver_patch", semver::patch),
    );
    Ok(())
}

/// The order of two quantities or two semantic versions (the receiver and the argument).
fn order(args: &[Value]) -> Result<std::cmp::Ordering, String> {
    use quantity::Quantity;
    use semver::Semver;
    if let (Ok(a), Ok(b)) = (
        opaque_arg::<Quantity>(args, 0, "quantity"),
        opaque_arg::<Quantity>(args, 1, "quantity"),
    ) {
        return Ok(a.cmp(b));
    }
    let a = opaque_arg::<Semver>(args, 0, "quantity or semver")?;
    let b = opaque_arg::<Semver>(args, 1, "semver")?;
    Ok(a.order(b))
}

/// `x.isGreaterThan(y)` of quantities or versions.
fn is_greater_than(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(order(args)?.is_gt()))
}

/// `x.isLessThan(y)` of quantities or versions.
fn is_less_than(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(order(args)?.is_lt()))
}

/// `x.compareTo(y)` of quantities or versions: -1, 0 or 1.
fn compare_to(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Int(order(args)? as i64))
}

/// The string argument at `i`.
fn string_arg(args: &[Value], i: usize) -> Result<&str, String> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.as_str()),
        other => Err(format!("expected a string, got {other:?}")),
    }
}

/// The opaque value of type `T` at `i`.
fn opaque_arg<'a, T: 'static>(args: &'a [Value], i: usize, what: &str) -> Result<&'a T, String> {
    match args.get(i) {
        Some(Value::Opaque(o)) => o
            .downcast_ref::<T>()
            .ok_or_else(|| format!("expected a {what}")),
        _ => Err(format!("expected a {what}")),
    }
}

fn opaque<T: cel::objects::Opaque>(v: T) -> Value {
    Value::Opaque(std::sync::Arc::new(v))
}

#[cfg(test)]
mod tests;
