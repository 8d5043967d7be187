"""Mail out: rendering templates, composing MIME, the outbox and its drain, the Mailer
protocol and its adapters (Maildir, SMTP)."""
