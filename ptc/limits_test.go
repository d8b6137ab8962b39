package ptc

import (
	"math"
	"testing"
)

func TestDefaultBudgetsAreTheSpecDefaultsAndValid(t *testing.T) {
	b := DefaultBudgets()
	want := Budgets{ComputeMs: 60_000, MaxWallMs: 600_000, MaxOutputBytes: 67_108_864, MaxMemoryMB: 512}
	if b != want {
		t.Fatalf("DefaultBudgets() = %+v, want %+v", b, want)
	}
	if err := b.Validate("goja"); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}
}

func TestBudgetsValidate(t *testing.T) {
	with := func(f func(*Budgets)) Budgets {
		b := DefaultBudgets()
		f(&b)
		return b
	}
	tests := []struct {
		name   string
		b      Budgets
		prefix string
		want   string // "" for valid
	}{
		{"a negative computeMs is not a positive number", with(func(b *Budgets) { b.ComputeMs = -1 }), "goja",
			"goja: config.computeMs must be a positive number, got -1"},
		{"a zero maxWallMs is not a positive number", with(func(b *Budgets) { b.MaxWallMs = 0 }), "goja",
			"goja: config.maxWallMs must be a positive number, got 0"},
		{"a negative zero is written as 0", with(func(b *Budgets) { b.MaxWallMs = math.Copysign(0, -1) }), "goja",
			"goja: config.maxWallMs must be a positive number, got 0"},
		{"a NaN computeMs is not a positive number", with(func(b *Budgets) { b.ComputeMs = math.NaN() }), "goja",
			"goja: config.computeMs must be a positive number, got NaN"},
		{"an infinite maxOutputBytes is not finite", with(func(b *Budgets) { b.MaxOutputBytes = math.Inf(1) }), "goja",
			"goja: config.maxOutputBytes must be a positive number, got Infinity"},
		{"a negative fractional maxMemoryMB is not a positive number", with(func(b *Budgets) { b.MaxMemoryMB = -0.5 }), "gopher-lua",
			"gopher-lua: config.maxMemoryMB must be a positive number, got -0.5"},
		{"the first failing field in upstream order is reported", with(func(b *Budgets) { b.MaxMemoryMB = 0; b.ComputeMs = -1; b.MaxOutputBytes = 3 }), "goja",
			"goja: config.computeMs must be a positive number, got -1"},
		{"positivity is checked before the output cap's integer rule", with(func(b *Budgets) { b.MaxOutputBytes = 3; b.MaxMemoryMB = -1 }), "goja",
			"goja: config.maxMemoryMB must be a positive number, got -1"},
		{"a maxWallMs of 2147483648 is over the ceiling", with(func(b *Budgets) { b.MaxWallMs = 2_147_483_648 }), "goja",
			"goja: config.maxWallMs must be at most 2147483647, got 2147483648"},
		{"a maxWallMs of 2147483647 loads", with(func(b *Budgets) { b.MaxWallMs = 2_147_483_647 }), "goja", ""},
		{"a maxOutputBytes of 3 is below the minimum", with(func(b *Budgets) { b.MaxOutputBytes = 3 }), "goja",
			"goja: config.maxOutputBytes must be a safe integer of at least 4, got 3"},
		{"a maxOutputBytes of 4.5 is not an integer", with(func(b *Budgets) { b.MaxOutputBytes = 4.5 }), "goja",
			"goja: config.maxOutputBytes must be a safe integer of at least 4, got 4.5"},
		{"a maxOutputBytes of 2^53 is not a safe integer", with(func(b *Budgets) { b.MaxOutputBytes = 1 << 53 }), "goja",
			"goja: config.maxOutputBytes must be a safe integer of at least 4, got 9007199254740992"},
		{"the output cap's rule is checked before the wall ceiling", with(func(b *Budgets) { b.MaxOutputBytes = 3; b.MaxWallMs = 1e10 }), "goja",
			"goja: config.maxOutputBytes must be a safe integer of at least 4, got 3"},
		{"a huge maxWallMs is written as String(n)", with(func(b *Budgets) { b.MaxWallMs = 1e21 }), "goja",
			"goja: config.maxWallMs must be at most 2147483647, got 1e+21"},
		{"a maxOutputBytes of 4 loads", with(func(b *Budgets) { b.MaxOutputBytes = 4 }), "goja", ""},
		{"a fractional computeMs is a positive number", with(func(b *Budgets) { b.ComputeMs = 0.5 }), "goja", ""},
		{"without a prefix the message starts at config", with(func(b *Budgets) { b.ComputeMs = -1 }), "",
			"config.computeMs must be a positive number, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Validate(tt.prefix)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate(%q) = %q, want %q", tt.prefix, got, tt.want)
			}
		})
	}
}

func TestValidateMaxParallelSubCalls(t *testing.T) {
	tests := []struct {
		name string
		n    float64
		ok   bool
	}{
		{"zero is refused", 0, false},
		{"a negative count is refused", -1, false},
		{"a fraction is refused", 1.5, false},
		{"NaN is refused", math.NaN(), false},
		{"infinity is refused", math.Inf(1), false},
		{"one means fully serial and is accepted", 1, true},
		{"the default ten is accepted", DefaultMaxParallelSubCalls, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateMaxParallelSubCalls(tt.n)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidateMaxParallelSubCalls(%v) = %v, want nil", tt.n, err)
				}
				return
			}
			if err == nil || err.Error() != "maxParallelSubCalls must be a positive integer" {
				t.Fatalf("ValidateMaxParallelSubCalls(%v) = %v, want the positive integer message", tt.n, err)
			}
		})
	}
}
