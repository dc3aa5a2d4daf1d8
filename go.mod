module github.com/atollhq/atoll

go 1.26
