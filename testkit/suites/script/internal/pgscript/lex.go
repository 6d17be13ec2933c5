package pgscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// tokenKind is a token of pgbench's expression syntax (its exprscan.l).
type tokenKind int

const (
	tokEOF tokenKind = iota
	tokInt
	tokMaxIntPlusOne // 9223372036854775808, only valid after a unary minus
	tokDouble
	tokVariable
	tokIdent // a function name
	tokOp    // an operator or punctuation, in token.text
	tokAnd
	tokOr
	tokNot
	tokIs
	tokIsNull
	tokNotNull
	tokCase
	tokWhen
	tokThen
	tokElse
	tokEnd
	tokTrue
	tokFalse
	tokNull
)

type token struct {
	kind tokenKind
	text string // as written
	pos  int    // byte offset in the expression
	i    int64
	f    float64
}

// keywords are matched case-insensitively, on a whole word only, as flex does: a word that
// merely starts with one is a function name.
var keywords = map[string]tokenKind{
	"and": tokAnd, "or": tokOr, "not": tokNot, "is": tokIs, "isnull": tokIsNull,
	"notnull": tokNotNull, "case": tokCase, "when": tokWhen, "then": tokThen, "else": tokElse,
	"end": tokEnd, "true": tokTrue, "false": tokFalse, "null": tokNull,
}

// twoCharOps are tried before the one-character ones (flex's longest match).
var twoCharOps = []string{"<>", "!=", "<=", ">=", "<<", ">>"}

const oneCharOps = "+-*/%=<>|&#~(),"

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}
func isNameChar(c byte) bool { return isNameStart(c) || isDigit(c) }

// lexExpression splits an expression into tokens, ending with tokEOF.
func lexExpression(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		start := i
		switch {
		case isSpace(c) || c == '\n':
			i++
			continue
		case c == ':':
			j := i + 1
			for j < len(src) && isNameChar(src[j]) {
				j++
			}
			if j == i+1 {
				return nil, fmt.Errorf("unexpected character %q at column %d", src[i], i+1)
			}
			toks = append(toks, token{kind: tokVariable, text: src[i+1 : j], pos: i})
			i = j
			continue
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			tok, n, err := lexNumber(src[i:])
			if err != nil {
				return nil, err
			}
			tok.pos = i
			toks = append(toks, tok)
			i += n
			continue
		case isNameStart(c):
			j := i + 1
			for j < len(src) && isNameChar(src[j]) {
				j++
			}
			word := src[i:j]
			kind, ok := keywords[strings.ToLower(word)]
			if !ok {
				kind = tokIdent
			}
			toks = append(toks, token{kind: kind, text: word, pos: i})
			i = j
			continue
		}
		matched := false
		for _, op := range twoCharOps {
			if strings.HasPrefix(src[i:], op) {
				toks = append(toks, token{kind: tokOp, text: op, pos: start})
				i += 2
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		if strings.IndexByte(oneCharOps, c) >= 0 {
			toks = append(toks, token{kind: tokOp, text: src[i : i+1], pos: start})
			i++
			continue
		}
		return nil, fmt.Errorf("unexpected character %q at column %d", c, i+1)
	}
	return append(toks, token{kind: tokEOF, pos: len(src)}), nil
}

// lexNumber reads the number at the start of src: digits alone are an integer,
// 9223372036854775808 alone is the magnitude of the smallest integer, and a fraction or an
// exponent makes a double (".5", "1.", "1e3", "2.5E-3").
func lexNumber(src string) (token, int, error) {
	i := 0
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	intEnd := i
	double := false
	if i < len(src) && src[i] == '.' {
		double = true
		i++
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			double = true
			i = j
		}
	}
	text := src[:i]
	if !double {
		text = src[:intEnd]
		if text == "9223372036854775808" {
			return token{kind: tokMaxIntPlusOne, text: text}, intEnd, nil
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return token{}, 0, fmt.Errorf("bigint constant overflow (%s)", text)
		}
		return token{kind: tokInt, text: text, i: n}, intEnd, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f == 0 && hasNonzeroMantissa(text) || f != 0 && math.Abs(f) < 0x1p-1022 {
		return token{}, 0, fmt.Errorf("double constant overflow (%s)", text)
	}
	return token{kind: tokDouble, text: text, f: f}, i, nil
}
