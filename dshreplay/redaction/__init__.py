"""Redaction: the rules (`secretrules`, `rules`, `engine`), the forms a secret is written in
(`decode`), JSON text masked in place (`jsontext`) and the redactor (`redactor`)."""
