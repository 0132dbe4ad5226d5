"""Reading a blueprint file: from its bytes to a located, schema-valid document.

- `raw_text`: the file's size, encoding and characters, checked before YAML reads it;
- `links`: a blueprint is read where its path says, never through a link out of its folder;
- `loader`: strict YAML (`yaml_scalars`: plain scalars under the YAML 1.2 core schema) into
  plain data with a source location for every value;
- `overrides`: ``environments.<env>.overrides`` merged, the blueprint as one environment sees it;
- `schema`: the JSON Schema (``blueprint.schema.json``, beside it) and validation against it,
  read as editors read it (`schema_dialect`), each error in the author's words
  (`schema_explain`, `schema_words`).
"""
