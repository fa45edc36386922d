module github.com/mcpkit/mcpkit

go 1.26
