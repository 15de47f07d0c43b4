//! Math functions callable in `expr` (`int`, `double`, `round`, `abs`, `max`, `min`, `sqrt`, `pow`, ...).
//! A child module of expr.rs, whose values it takes and returns.

use std::cmp::Ordering;

use super::{compare, from_num, operand, Val};
use crate::tcl::number::Num;
use crate::tcl::{error, Exception};

/// Applies the math function `name` to evaluated arguments.
pub(crate) fn math_func(name: &str, args: Vec<Val>) -> Result<Val, Exception> {
    let nums: Vec<Num> = args.iter().map(|a| operand(a, name)).collect::<Result<_, _>>()?;
    let arity = match name {
        "max" | "min" => nums.len().max(1),
        "pow" | "fmod" | "atan2" | "hypot" => 2,
        _ => 1,
    };
    if nums.len() != arity {
        let which = if nums.len() < arity { "few" } else { "many" };
        return Err(error(format!("too {which} arguments for math function \"{name}\"")));
    }
    let x = nums[0];
    let f = x.as_f64();
    let y = nums.get(1).map_or(0.0, |n| n.as_f64());
    let dbl = |v: f64| {
        if v.is_nan() {
            Err(error("domain error: argument not in valid range"))
        } else {
            Ok(Val::Dbl(v))
        }
    };
    match name {
        "int" | "wide" | "entier" => match x {
            Num::Int(i) => Ok(Val::Int(i)),
            Num::Dbl(d) if d.is_finite() && d.abs() < 9.2e18 => Ok(Val::Int(d.trunc() as i64)),
            Num::Dbl(_) => Err(error("integer value too large to represent")),
        },
        "round" => match x {
            Num::Int(i) => Ok(Val::Int(i)),
            Num::Dbl(d) if d.is_finite() && d.abs() < 9.2e18 => Ok(Val::Int(d.round() as i64)),
            Num::Dbl(_) => Err(error("integer value too large to represent")),
        },
        "double" => dbl(f),
        "bool" => Ok(Val::Int(i64::from(f != 0.0))),
        "abs" => Ok(match x {
            Num::Int(i) => i.checked_abs().map_or(Val::Dbl(f.abs()), Val::Int),
            Num::Dbl(d) => Val::Dbl(d.abs()),
        }),
        "max" | "min" => {
            let want = if name == "max" { Ordering::Greater } else { Ordering::Less };
            let best =
                nums.iter().copied().fold(x, |b, n| if compare(&from_num(n), &from_num(b)) == want { n } else { b });
            Ok(from_num(best))
        }
        "sqrt" => dbl(f.sqrt()),
        "floor" => dbl(f.floor()),
        "ceil" => dbl(f.ceil()),
        "exp" => dbl(f.exp()),
        "log" => dbl(f.ln()),
        "log10" => dbl(f.log10()),
        "sin" => dbl(f.sin()),
        "cos" => dbl(f.cos()),
        "tan" => dbl(f.tan()),
        "atan" => dbl(f.atan()),
        "pow" => dbl(f.powf(y)),
        "fmod" => dbl(f % y),
        "atan2" => dbl(f.atan2(y)),
        "hypot" => dbl(f.hypot(y)),
        _ => Err(error(format!("invalid command name \"tcl::mathfunc::{name}\""))),
    }
}
