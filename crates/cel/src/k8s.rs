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

use cel::common::types::{Type, DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
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

fn member(
    env: &mut Env,
    name: &str,
    id: &str,
    target: Type,
    args: Vec<Type>,
    f: cel::common::functions::Function,
) -> Result<(), DeclarationError> {
    env.add_member_overload(name, id, target, args, f)
}

/// Add Kubernetes' libraries to `env`.
pub(crate) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    comprehensions::extension(env)?;
    // Lists.
    member(
        env,
        "isSorted",
        "list_is_sorted",
        LIST_TYPE,
        vec![],
        adapt!("isSorted", lists::is_sorted),
    )?;
    member(
        env,
        "sum",
        "list_sum",
        LIST_TYPE,
        vec![],
        adapt!("sum", lists::sum),
    )?;
    member(
        env,
        "min",
        "list_min",
        LIST_TYPE,
        vec![],
        adapt!("min", lists::min),
    )?;
    member(
        env,
        "max",
        "list_max",
        LIST_TYPE,
        vec![],
        adapt!("max", lists::max),
    )?;
    member(
        env,
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        adapt!("indexOf", lists::index_of),
    )?;
    member(
        env,
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        adapt!("lastIndexOf", lists::last_index_of),
    )?;
    // Regex.
    member(
        env,
        "find",
        "string_find_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        adapt!("find", regex::find),
    )?;
    member(
        env,
        "findAll",
        "string_find_all_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        adapt!("findAll", regex::find_all),
    )?;
    member(
        env,
        "findAll",
        "string_find_all_string_int",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        adapt!("findAll", regex::find_all),
    )?;
    // Sets.
    for (name, f) in [
        (
            "sets.contains",
            adapt!("sets.contains", sets::contains) as cel::common::functions::Function,
        ),
        (
            "sets.equivalent",
            adapt!("sets.equivalent", sets::equivalent),
        ),
        (
            "sets.intersects",
            adapt!("sets.intersects", sets::intersects),
        ),
    ] {
        env.add_overload(
            name,
            &format!("{name}_list_list"),
            vec![LIST_TYPE, LIST_TYPE],
            f,
        )?;
    }
    // Quantity.
    env.add_overload(
        "quantity",
        "string_to_quantity",
        vec![STRING_TYPE],
        adapt!("quantity", quantity::parse),
    )?;
    env.add_overload(
        "isQuantity",
        "is_quantity_string",
        vec![STRING_TYPE],
        adapt!("isQuantity", quantity::is_quantity),
    )?;
    for (name, id, f) in [
        (
            "sign",
            "quantity_sign",
            adapt!("sign", quantity::sign) as cel::common::functions::Function,
        ),
        (
            "asApproximateFloat",
            "quantity_get_float",
            adapt!("asApproximateFloat", quantity::as_float),
        ),
        (
            "asInteger",
            "quantity_get_int",
            adapt!("asInteger", quantity::as_integer),
        ),
        (
            "isInteger",
            "quantity_is_integer",
            adapt!("isInteger", quantity::is_integer),
        ),
    ] {
        member(env, name, id, DYN_TYPE, vec![], f)?;
    }
    for (name, id, f) in [
        (
            "isGreaterThan",
            "quantity_is_greater_than",
            adapt!("isGreaterThan", is_greater_than) as cel::common::functions::Function,
        ),
        (
            "isLessThan",
            "quantity_is_less_than",
            adapt!("isLessThan", is_less_than),
        ),
        (
            "compareTo",
            "quantity_compare_to",
            adapt!("compareTo", compare_to),
        ),
        ("add", "quantity_add", adapt!("add", quantity::add)),
        ("sub", "quantity_sub", adapt!("sub", quantity::sub)),
    ] {
        member(env, name, id, DYN_TYPE, vec![DYN_TYPE], f)?;
    }
    // URLs, IPs, CIDRs.
    env.add_overload(
        "url",
        "string_to_url",
        vec![STRING_TYPE],
        adapt!("url", net::url),
    )?;
    env.add_overload(
        "isURL",
        "is_url_string",
        vec![STRING_TYPE],
        adapt!("isURL", net::is_url),
    )?;
    for (name, id, f) in [
        (
            "getScheme",
            "url_get_scheme",
            adapt!("getScheme", net::get_scheme) as cel::common::functions::Function,
        ),
        ("getHost", "url_get_host", adapt!("getHost", net::get_host)),
        (
            "getHostname",
            "url_get_hostname",
            adapt!("getHostname", net::get_hostname),
        ),
        ("getPort", "url_get_port", adapt!("getPort", net::get_port)),
        (
            "getEscapedPath",
            "url_get_escaped_path",
            adapt!("getEscapedPath", net::get_escaped_path),
        ),
        (
            "getQuery",
            "url_get_query",
            adapt!("getQuery", net::get_query),
        ),
        ("family", "ip_family", adapt!("family", net::family)),
        (
            "isUnspecified",
            "ip_is_unspecified",
            adapt!("isUnspecified", net::is_unspecified),
        ),
        (
            "isLoopback",
            "ip_is_loopback",
            adapt!("isLoopback", net::is_loopback),
        ),
        (
            "isGlobalUnicast",
            "ip_is_global_unicast",
            adapt!("isGlobalUnicast", net::is_global_unicast),
        ),
        (
            "isLinkLocalUnicast",
            "ip_is_link_local_unicast",
            adapt!("isLinkLocalUnicast", net::is_link_local_unicast),
        ),
        (
            "isLinkLocalMulticast",
            "ip_is_link_local_multicast",
            adapt!("isLinkLocalMulticast", net::is_link_local_multicast),
        ),
        (
            "prefixLength",
            "cidr_prefix_length",
            adapt!("prefixLength", net::prefix_length),
        ),
        ("masked", "cidr_masked", adapt!("masked", net::masked)),
        ("ip", "cidr_ip", adapt!("ip", net::cidr_ip)),
    ] {
        member(env, name, id, DYN_TYPE, vec![], f)?;
    }
    env.add_overload(
        "ip",
        "string_to_ip",
        vec![STRING_TYPE],
        adapt!("ip", net::ip),
    )?;
    env.add_overload(
        "isIP",
        "is_ip",
        vec![STRING_TYPE],
        adapt!("isIP", net::is_ip),
    )?;
    env.add_overload(
        "ip.isCanonical",
        "ip_is_canonical",
        vec![STRING_TYPE],
        adapt!("ip.isCanonical", net::is_canonical),
    )?;
    env.add_overload(
        "cidr",
        "string_to_cidr",
        vec![STRING_TYPE],
        adapt!("cidr", net::cidr),
    )?;
    env.add_overload(
        "isCIDR",
        "is_cidr",
        vec![STRING_TYPE],
        adapt!("isCIDR", net::is_cidr),
    )?;
    member(
        env,
        "containsIP",
        "cidr_contains_ip",
        DYN_TYPE,
        vec![DYN_TYPE],
        adapt!("containsIP", net::contains_ip),
    )?;
    member(
        env,
        "containsCIDR",
        "cidr_contains_cidr",
        DYN_TYPE,
        vec![DYN_TYPE],
        adapt!("containsCIDR", net::contains_cidr),
    )?;
    // Named formats.
    macro_rules! named_format {
        ($($n:literal),*) => {$(
            env.add_overload(
                concat!("format.", $n),
                concat!("format-", $n),
                vec![],
                adapt!(concat!("format.", $n), |_: &[Value]| Ok(format::named_constant($n))),
            )?;
        )*};
    }
    named_format!(
        "dns1123Label",
        "dns1123Subdomain",
        "dns1035Label",
        "qualifiedName",
        "dns1123LabelPrefix",
        "dns1123SubdomainPrefix",
        "dns1035LabelPrefix",
        "labelValue",
        "uri",
        "uuid",
        "byte",
        "date",
        "datetime"
    );
    env.add_overload(
        "format.named",
        "format-named",
        vec![STRING_TYPE],
        adapt!("format.named", format::named),
    )?;
    member(
        env,
        "validate",
        "format-validate",
        DYN_TYPE,
        vec![STRING_TYPE],
        adapt!("validate", format::validate),
    )?;
    // Semantic versions.
    env.add_overload(
        "semver",
        "string_to_semver",
        vec![STRING_TYPE],
        adapt!("semver", semver::parse),
    )?;
    env.add_overload(
        "isSemver",
        "is_semver_string",
        vec![STRING_TYPE],
        adapt!("isSemver", semver::is_semver),
    )?;
    for (name, id, f) in [
        (
            "major",
            "semver_major",
            adapt!("major", semver::major) as cel::common::functions::Function,
        ),
        ("minor", "semver_minor", adapt!("minor", semver::minor)),
        ("patch", "semver_patch", adapt!("patch", semver::patch)),
    ] {
        member(env, name, id, DYN_TYPE, vec![], f)?;
    }
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
