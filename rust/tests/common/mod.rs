//! Fixtures shared by the integration test binaries (each includes this with `mod common;`).

use parquet::data_type::{ByteArray, ByteArrayType};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::Path;
use std::sync::Arc;

/// Writes a Parquet file of one required UTF-8 column, `user_prompt`, holding `values` in one row group.
pub fn write_user_prompts(path: &Path, values: &[&str]) {
    let schema =
        parse_message_type("message m { REQUIRED BYTE_ARRAY user_prompt (UTF8); }").unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let file = std::fs::File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), props).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut column = group.next_column().unwrap().unwrap();
    let values: Vec<ByteArray> = values.iter().map(|v| ByteArray::from(*v)).collect();
    column
        .typed::<ByteArrayType>()
        .write_batch(&values, None, None)
        .unwrap();
    column.close().unwrap();
    group.close().unwrap();
    writer.close().unwrap();
}
