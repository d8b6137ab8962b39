package main

import "github.com/dsh-go/dsh/cmd/dsh/cli"

func main() { cli.Main() }
