"""Sealed secrets in the legacy format 1, frozen: made by chalicelib/store/secret_box.py as it was
before issue #45 (HMAC-SHA256 counter-mode stream + HMAC tag, JSON), so tests can prove that
what earlier releases stored still opens and migrates. Never regenerate them: the code that
wrote them is gone (its read path is secret_box's "legacy" section)."""

KEY_ID = "AKIAABCDEFGHIJKLMNOP"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

# Made by the format-1 code (before issue #45) with the key file FIXTURE_KEK, for KEY_ID and SECRET.
FIXTURE_KEK = bytes(range(32))
V1_FILE = (
    b'{"v":1,"kek":"file","dk":{"n":"GatmdOGyScbioF5S0aUc7Q==","c":"mv7KhOql3w7yyyRjjihQvGdyVFtw55/okIWCCPbYy3g=",'
    b'"t":"DyDCTDN8Zglh1YlMzWK2z28TTQYLnhc/2rj+4NgavxI="},"secret":{"n":"H6BLMfHNvlJlCrhTIG3cew==",'
    b'"c":"R4k2dSloVBPdK9r6Qen8j078C1qqshAmLvYtIOrTQfxHlEysdwt3bQ==",'
    b'"t":"RtvI8QutVEeZEOL+AGQL4FG6ejwFmZsaIDgm1UvnTWo="}}')
# Made by the same code with KMS, whose GenerateDataKey answered V1_KMS_DATA_KEY wrapped as V1_KMS_BLOB.
V1_KMS_DATA_KEY = bytes(range(100, 132))
V1_KMS_BLOB = b"fake-kms-ciphertext-blob:" + bytes(range(8))
V1_KMS = (
    b'{"v":1,"kek":"kms","dk":{"kms":"ZmFrZS1rbXMtY2lwaGVydGV4dC1ibG9iOgABAgMEBQYH"},'
    b'"secret":{"n":"2/gAIIIioBr/6p29bWQgzg==","c":"A+RItlDzSO92FxF2b6qWjKjJKHQI6Ddo8jZzFIjGaTGr1paZstjoXA==",'
    b'"t":"KBYbxJIkUqGH+eWkHBt5Uup+1Gv4P2+5/7MFVdygnfM="}}')
