module leasehold.dev/leasehold

go 1.19
