package sqlshape

import "strconv"

// notClient says why an expression is not a client value: the innermost part that is
// not (a function, a column, a decimal of too many places, …) and why.
type notClient struct {
	node      *node
	why       string
	column    bool // it reads a column
	evaluated bool // why is the error of evaluating it, which names it
}

// clientValue converts an expression of the statement into an Expr, or says which
// part of it the kit cannot evaluate exactly.
func clientValue(n *node) (Expr, *notClient) {
	switch n.op {
	case opParam:
		return Param{Index: n.param}, nil
	case opInt, opDecimal, opFloat, opString, opBool, opNull, opBits:
		return literal(n)
	case opCast:
		x, bad := clientValue(n.args[0])
		if bad != nil {
			return nil, bad
		}
		if n.castWhy != "" {
			return nil, &notClient{node: n, why: n.castWhy}
		}
		c := n.cast
		c.X = x
		return folded(n, c)
	case opBinary, opUnary:
		op := n.oper
		if op != "+" && op != "-" && op != "*" {
			return nil, &notClient{node: n, why: "uses an operator the kit does not evaluate (it evaluates + - * of integers and decimals)"}
		}
		r, bad := clientValue(n.args[len(n.args)-1])
		if bad != nil {
			return nil, bad
		}
		if n.op == opUnary {
			if op == "*" {
				return nil, &notClient{node: n, why: "is not an expression the kit evaluates"}
			}
			if op == "+" {
				return r, nil
			}
			return folded(n, Neg{X: r})
		}
		l, bad := clientValue(n.args[0])
		if bad != nil {
			return nil, bad
		}
		return folded(n, Arith{Op: op[0], L: l, R: r})
	case opColumn:
		name := ""
		for _, p := range n.parts {
			if p != "*" {
				name = p
			}
		}
		return nil, &notClient{node: n, column: true,
			why: "reads column " + name + ", which only the server knows when the write lands"}
	case opFunc, opServerTime:
		return nil, &notClient{node: n, why: "is a function the kit cannot evaluate"}
	case opSubquery:
		return nil, &notClient{node: n, why: "is a sub-select, which reads the database when the write lands"}
	}
	return nil, &notClient{node: n, why: "is not a value the kit can evaluate"}
}

// literal converts a literal: integers to 64 bits, exact decimals to decimal.MaxPlaces places.
func literal(n *node) (Expr, *notClient) {
	switch n.op {
	case opNull:
		return Const{Value: Null}, nil
	case opInt:
		i, err := strconv.ParseInt(n.lit, 10, 64)
		if err != nil {
			return nil, &notClient{node: n, why: "is beyond 64-bit integers"}
		}
		return Const{Value: Int(i)}, nil
	case opDecimal:
		d, err := parseDecimal(n.lit)
		if err != nil {
			return nil, &notClient{node: n, why: err.Error()}
		}
		return Const{Value: d}, nil
	case opFloat:
		return nil, &notClient{node: n, why: "is a floating-point literal: the server computes with it in floating point, which the kit does not"}
	case opString:
		return Const{Value: String(n.lit)}, nil
	case opBool:
		return Const{Value: Bool(n.flag)}, nil
	}
	return nil, &notClient{node: n, why: "is a bit string"}
}

// folded refuses an expression without parameters whose evaluation fails (an overflow, a
// product of too many decimal places, a cast that would round): it would fail for every
// request.
func folded(n *node, e Expr) (Expr, *notClient) {
	if hasParam(e) {
		return e, nil
	}
	if _, err := e.Eval(nil); err != nil {
		return nil, &notClient{node: n, why: err.Error(), evaluated: true}
	}
	return e, nil
}

func hasParam(e Expr) bool {
	switch v := e.(type) {
	case Param:
		return true
	case Neg:
		return hasParam(v.X)
	case Arith:
		return hasParam(v.L) || hasParam(v.R)
	case Cast:
		return hasParam(v.X)
	}
	return false
}

// numberOnly returns the part of a client value that keeps it from being a number
// (an integer or a decimal), or nil: increments and greatest/least bounds are added and
// compared as numbers, so a NULL, a boolean or a cast to another type would change what
// they mean.
func numberOnly(e Expr) Expr {
	switch v := e.(type) {
	case Const:
		if v.Value.Kind == NullValue || v.Value.Kind == BoolValue {
			return v
		}
	case Neg:
		return numberOnly(v.X)
	case Arith:
		if bad := numberOnly(v.L); bad != nil {
			return bad
		}
		return numberOnly(v.R)
	case Cast:
		if v.To != CastInt2 && v.To != CastInt4 && v.To != CastInt8 && v.To != CastUnsigned && v.To != CastNumeric {
			return v
		}
		return numberOnly(v.X)
	}
	return nil
}
