"""What the model's answers say beyond Fabric's status codes: words of its protocol that
ordeal's client (fabric/client.py) reads. Fabric's info text is free-form, so these are the
model's own."""

# Marks a SERVICE_UNAVAILABLE whose envelope reached Kafka and may be ordered after all, so
# a client can record it as indeterminate rather than failed.
MAYBE_APPENDED = "maybe-appended"
