module go.digitalxero.dev/go-msix

go 1.24
