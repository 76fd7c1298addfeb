//! CEL's two-variable comprehensions, which Kubernetes 1.32 enables: `l.all(i, v, p)`,
//! `exists`, `existsOne`, `transformList(i, v, e)` and `transformList(i, v, f, e)`, over a
//! list (index and item) or a map (key and value).
//!
//! cel-rust's interpreter runs one-variable comprehensions only, so each macro expands into
//! one: the target is bound once, the loop runs over its indexes (a list) or keys (a map),
//! and the second variable is bound to the item at the first:
//! `cel.bind(@in, t, (type(@in) == list ? lists.range(size(@in)) : @in).all(i,
//! cel.bind(v, @in[i], p)))`.

use cel::common::ast::{CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue};
use cel::parser::{Macro, MacroExprHelper, ParseError};
use cel::{DeclarationError, Env};

/// The variable the target is bound to (not a name CEL source can write).
const INPUT: &str = "@__two_var_input__";
const RESULT: &str = "@result";

type Helper<'a, 'b> = &'a mut MacroExprHelper<'b>;

fn ident(h: Helper, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_owned()))
}

fn call(h: Helper, f: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: f.to_owned(),
        target: None,
        args,
    }))
}

fn boolean(h: Helper, b: bool) -> IdedExpr {
    h.next_expr(Expr::Literal(LiteralValue::Boolean(b.into())))
}

/// `cel.bind(var, init, body)`, as cel-go expands it: a loop over nothing whose accumulator is
/// the variable.
fn bind(h: Helper, var: &str, init: IdedExpr, body: IdedExpr) -> IdedExpr {
    let c = ComprehensionExpr {
        iter_range: h.next_expr(Expr::List(ListExpr::new(Vec::new()))),
        iter_var: "#unused".to_owned(),
        iter_var2: None,
        accu_var: var.to_owned(),
        accu_init: init,
        loop_cond: boolean(h, false),
        loop_step: ident(h, var),
        result: body,
    };
    h.next_expr(Expr::Comprehension(Box::new(c)))
}

fn name(h: Helper, e: IdedExpr) -> Result<String, ParseError> {
    match e.expr {
        Expr::Ident(n) => Ok(n),
        _ => Err(h.new_error(e.id, "argument must be a simple name")),
    }
}

/// What a macro folds: the accumulator's start, the loop's condition, its step from the
/// per-item expressions, and the result.
type Fold = fn(Helper, Vec<IdedExpr>) -> (IdedExpr, IdedExpr, IdedExpr, IdedExpr);

fn all(h: Helper, mut e: Vec<IdedExpr>) -> (IdedExpr, IdedExpr, IdedExpr, IdedExpr) {
    let p = e.remove(0);
    let cond = {
        let r = ident(h, RESULT);
        call(h, "@not_strictly_false", vec![r])
    };
    let step = {
        let r = ident(h, RESULT);
        call(h, "_&&_", vec![r, p])
    };
    (boolean(h, true), cond, step, ident(h, RESULT))
}

fn exists(h: Helper, mut e: Vec<IdedExpr>) -> (IdedExpr, IdedExpr, IdedExpr, IdedExpr) {
    let p = e.remove(0);
    let cond = {
        let r = ident(h, RESULT);
        let not = call(h, "!_", vec![r]);
        call(h, "@not_strictly_false", vec![not])
    };
    let step = {
        let r = ident(h, RESULT);
        call(h, "_||_", vec![r, p])
    };
    (boolean(h, false), cond, step, ident(h, RESULT))
}

fn exists_one(h: Helper, mut e: Vec<IdedExpr>) -> (IdedExpr, IdedExpr, IdedExpr, IdedExpr) {
    let p = e.remove(0);
    let zero = h.next_expr(Expr::Literal(LiteralValue::Int(0.into())));
    let step = {
        let r = ident(h, RESULT);
        let one = h.next_expr(Expr::Literal(LiteralValue::Int(1.into())));
        let plus = call(h, "_+_", vec![r, one]);
        let same = ident(h, RESULT);
        call(h, "_?_:_", vec![p, plus, same])
    };
    let result = {
        let r = ident(h, RESULT);
        let one = h.next_expr(Expr::Literal(LiteralValue::Int(1.into())));
        call(h, "_==_", vec![r, one])
    };
    (zero, boolean(h, true), step, result)
}

fn transform_list(h: Helper, mut e: Vec<IdedExpr>) -> (IdedExpr, IdedExpr, IdedExpr, IdedExpr) {
    let value = e.pop();
    let filter = e.pop();
    let add = |h: Helper, v: IdedExpr| {
        let r = ident(h, RESULT);
        let one = h.next_expr(Expr::List(ListExpr::new(vec![v])));
        call(h, "_+_", vec![r, one])
    };
    let step = match (filter, value) {
        (Some(f), Some(v)) => {
            let added = add(h, v);
            let same = ident(h, RESULT);
            call(h, "_?_:_", vec![f, added, same])
        }
        (None, Some(v)) => add(h, v),
        _ => ident(h, RESULT),
    };
    let start = h.next_expr(Expr::List(ListExpr::new(Vec::new())));
    (start, boolean(h, true), step, ident(h, RESULT))
}

fn expand(
    h: Helper,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
    fold: Fold,
) -> Result<Option<IdedExpr>, ParseError> {
    let Some(t) = target.take() else {
        return Ok(None);
    };
    let mut args = std::mem::take(args).into_iter();
    let (Some(i), Some(v)) = (args.next(), args.next()) else {
        return Ok(None);
    };
    let (i, v) = (name(h, i)?, name(h, v)?);
    // The per-item expressions, each with the second variable bound to the item at `i`.
    let items: Vec<IdedExpr> = args
        .map(|body| {
            let input = ident(h, INPUT);
            let key = ident(h, &i);
            let at = call(h, "_[_]", vec![input, key]);
            bind(h, &v, at, body)
        })
        .collect();
    let (init, cond, step, result) = fold(h, items);
    let range = {
        let input = ident(h, INPUT);
        let ty = call(h, "type", vec![input]);
        let list = ident(h, "list");
        let is_list = call(h, "_==_", vec![ty, list]);
        let input = ident(h, INPUT);
        let size = call(h, "size", vec![input]);
        let indexes = call(h, "lists.range", vec![size]);
        let keys = ident(h, INPUT);
        call(h, "_?_:_", vec![is_list, indexes, keys])
    };
    let loop_ = ComprehensionExpr {
        iter_range: range,
        iter_var: i,
        iter_var2: None,
        accu_var: RESULT.to_owned(),
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result,
    };
    let loop_ = h.next_expr(Expr::Comprehension(Box::new(loop_)));
    Ok(Some(bind(h, INPUT, t, loop_)))
}

/// Add the two-variable macros to `env`.
pub(super) fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    let macros: [(&str, usize, Fold); 6] = [
        ("all", 3, all),
        ("exists", 3, exists),
        ("existsOne", 3, exists_one),
        ("exists_one", 3, exists_one),
        ("transformList", 3, transform_list),
        ("transformList", 4, transform_list),
    ];
    for (f, n, fold) in macros {
        env.add_macro(Macro::receiver(f, n, move |h, t, a| expand(h, t, a, fold)))?;
    }
    Ok(())
}
