"""Mail in: the Inbox protocol and its adapters (Maildir, IMAP), parsing raw mail into an
`Inbound`, and who sent it (signed addresses, passwords, Authentication-Results)."""
