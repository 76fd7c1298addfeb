//! The label selector string grammar, token for token as `k8s.io/apimachinery/pkg/labels`
//! reads it, so the same inputs fail with the same messages.
//!
//! ```text
//! selector    := <empty> | requirement ( ',' requirement )*
//! requirement := ['!'] KEY
//!              | KEY ( '=' | '==' | '!=' | '>' | '<' ) [VALUE]
//!              | KEY ( 'in' | 'notin' ) '(' [VALUE] ( ',' [VALUE] )* ')'
//! ```
//!
//! `in` and `notin` are keywords only where an operator is expected; as keys and values they
//! are ordinary identifiers.

use super::{Operator, Requirement};
use crate::selector::{validation, Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    In,
    NotIn,
    Equals,
    DoubleEquals,
    NotEquals,
    GreaterThan,
    LessThan,
    Bang,
    Open,
    Close,
    Comma,
    End,
}

impl Token {
    fn literal(&self) -> &str {
        match self {
            Token::Ident(s) => s,
            Token::In => "in",
            Token::NotIn => "notin",
            Token::Equals => "=",
            Token::DoubleEquals => "==",
            Token::NotEquals => "!=",
            Token::GreaterThan => ">",
            Token::LessThan => "<",
            Token::Bang => "!",
            Token::Open => "(",
            Token::Close => ")",
            Token::Comma => ",",
            Token::End => "",
        }
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn lex(s: &str) -> Vec<Token> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if is_space(c) {
            i += 1;
            continue;
        }
        let next = b.get(i + 1).copied();
        let (tok, len) = match (c, next) {
            (b'!', Some(b'=')) => (Token::NotEquals, 2),
            (b'=', Some(b'=')) => (Token::DoubleEquals, 2),
            (b'!', _) => (Token::Bang, 1),
            (b'=', _) => (Token::Equals, 1),
            (b'(', _) => (Token::Open, 1),
            (b')', _) => (Token::Close, 1),
            (b',', _) => (Token::Comma, 1),
            (b'>', _) => (Token::GreaterThan, 1),
            (b'<', _) => (Token::LessThan, 1),
            _ => {
                // Identifiers end only at ASCII bytes, so the slice stays on char boundaries.
                let end = b[i..]
                    .iter()
                    .position(|&c| is_space(c) || is_special(c))
                    .map_or(b.len(), |n| i + n);
                let word = &s[i..end];
                let tok = match word {
                    "in" => Token::In,
                    "notin" => Token::NotIn,
                    _ => Token::Ident(word.to_string()),
                };
                (tok, end - i)
            }
        };
        out.push(tok);
        i += len;
    }
    out.push(Token::End);
    out
}

/// Where a token is read: keywords are keywords only where an operator may stand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self, ctx: Context) -> Token {
        let t = self.tokens.get(self.pos).cloned().unwrap_or(Token::End);
        Self::in_context(t, ctx)
    }

    fn next(&mut self, ctx: Context) -> Token {
        let t = self.peek(ctx);
        self.pos = (self.pos + 1).min(self.tokens.len());
        t
    }

    fn in_context(t: Token, ctx: Context) -> Token {
        match (t, ctx) {
            (Token::In, Context::Values) => Token::Ident("in".into()),
            (Token::NotIn, Context::Values) => Token::Ident("notin".into()),
            (t, _) => t,
        }
    }

    fn selector(&mut self) -> Result<Vec<Requirement>> {
        let mut reqs = Vec::new();
        loop {
            match self.peek(Context::Values) {
                Token::Ident(_) | Token::Bang => {
                    reqs.push(self.requirement().map_err(Error::Requirement)?);
                    match self.next(Context::Values) {
                        Token::End => return Ok(reqs),
                        Token::Comma => match self.peek(Context::Values) {
                            Token::Ident(_) | Token::Bang => {}
                            t => {
                                return Err(Error::LabelSyntax(format!(
                                    "found '{}', expected: identifier after ','",
                                    t.literal()
                                )))
                            }
                        },
                        t => {
                            return Err(Error::LabelSyntax(format!(
                                "found '{}', expected: ',' or 'end of string'",
                                t.literal()
                            )))
                        }
                    }
                }
                Token::End => return Ok(reqs),
                t => {
                    return Err(Error::LabelSyntax(format!(
                        "found '{}', expected: !, identifier, or 'end of string'",
                        t.literal()
                    )))
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, unary) = self.key_and_unary_operator()?;
        if let Some(op) = unary {
            return Requirement::checked(key, op, Vec::new());
        }
        let op = self.operator()?;
        let mut values = match op {
            Operator::In | Operator::NotIn => self.value_set()?,
            _ => self.exact_value()?,
        };
        // A set, listed in order: value errors then point at the same index as Kubernetes'.
        values.sort();
        values.dedup();
        Requirement::checked(key, op, values)
    }

    /// The key, and `Exists`/`DoesNotExist` when no binary operator follows.
    fn key_and_unary_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut op = None;
        let mut t = self.next(Context::Values);
        if t == Token::Bang {
            op = Some(Operator::DoesNotExist);
            t = self.next(Context::Values);
        }
        let Token::Ident(key) = t else {
            return Err(format!("found '{}', expected: identifier", t.literal()));
        };
        let errs = validation::qualified_name_errors(&key);
        if !errs.is_empty() {
            return Err(format!("key: Invalid value: {key:?}: {}", errs.join("; ")));
        }
        if op.is_none() && matches!(self.peek(Context::Values), Token::End | Token::Comma) {
            op = Some(Operator::Exists);
        }
        Ok((key, op))
    }

    fn operator(&mut self) -> Result<Operator, String> {
        Ok(match self.next(Context::KeyAndOperator) {
            Token::In => Operator::In,
            Token::NotIn => Operator::NotIn,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::NotEquals => Operator::NotEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            t => {
                return Err(format!(
                    "found '{}', expected: in, notin, =, ==, !=, gt, lt",
                    t.literal()
                ))
            }
        })
    }

    /// `( a, b )`; `()` and empty slots stand for the empty value.
    fn value_set(&mut self) -> Result<Vec<String>, String> {
        let t = self.next(Context::Values);
        if t != Token::Open {
            return Err(format!("found '{}' expected: '('", t.literal()));
        }
        match self.peek(Context::Values) {
            Token::Ident(_) | Token::Comma => {
                let values = self.identifiers()?;
                match self.next(Context::Values) {
                    Token::Close => Ok(values),
                    t => Err(format!("found '{}', expected: ')'", t.literal())),
                }
            }
            Token::Close => {
                self.next(Context::Values);
                Ok(vec![String::new()])
            }
            t => Err(format!(
                "found '{}', expected: ',', ')' or identifier",
                t.literal()
            )),
        }
    }

    /// The inside of a value set, stopping before `)`.
    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        loop {
            match self.next(Context::Values) {
                Token::Ident(v) => {
                    values.push(v);
                    match self.peek(Context::Values) {
                        Token::Comma => {}
                        Token::Close => return Ok(values),
                        t => return Err(format!("found '{}', expected: ',' or ')'", t.literal())),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    match self.peek(Context::Values) {
                        Token::Close => {
                            values.push(String::new());
                            return Ok(values);
                        }
                        Token::Comma => {
                            self.next(Context::Values);
                            values.push(String::new());
                        }
                        _ => {}
                    }
                }
                t => {
                    return Err(format!(
                        "found '{}', expected: ',', or identifier",
                        t.literal()
                    ))
                }
            }
        }
    }

    /// The single value after `=`, `==`, `!=`, `>`, `<`; nothing before `,` or the end means "".
    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        if matches!(self.peek(Context::Values), Token::End | Token::Comma) {
            return Ok(vec![String::new()]);
        }
        match self.next(Context::Values) {
            Token::Ident(v) => Ok(vec![v]),
            t => Err(format!("found '{}', expected: identifier", t.literal())),
        }
    }
}

/// Parse a label selector string into its requirements.
pub(super) fn parse(s: &str) -> Result<Vec<Requirement>> {
    Parser {
        tokens: lex(s),
        pos: 0,
    }
    .selector()
}
