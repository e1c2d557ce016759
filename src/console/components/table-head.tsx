/** A column of a table's header row; `numeric` right-aligns it like the numbers under it. */
export interface Column {
  label: string;
  numeric?: boolean;
}

/** The header row of a table: one `<th scope="col">` per column. */
export function TableHead({ columns }: { columns: readonly Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th key={column.label} scope="col" class={column.numeric ? 'number' : undefined}>
            {column.label}
          </th>
        ))}
      </tr>
    </thead>
  );
}
