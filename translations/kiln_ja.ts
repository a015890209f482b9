<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ja_JP">
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/preferences_dialog.cpp" line="+45"/>
        <source>One per line</source>
        <translation>1行に1つ</translation>
    </message>
</context>
<context>
    <name>kiln::app</name>
    <message>
        <location filename="../app/settings/settings.cpp" line="+34"/>
        <source>Folders searched for checkpoints, LoRAs and VAEs, including ComfyUI and A1111 model trees</source>
        <translation>チェックポイント、LoRA、VAE を探すフォルダ（ComfyUI と A1111 のモデルフォルダを含む）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where results are saved</source>
        <translation>結果の保存先</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Names of saved files: {date}, {time}, {seed}, {model} are filled in</source>
        <translation>保存するファイル名：{date}、{time}、{seed}、{model} が置き換えられます</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where to compute: cpu, cuda:N</source>
        <translation>計算するデバイス：cpu、cuda:N</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>How weights move between host and device memory</source>
        <translation>重みをホストメモリとデバイスメモリの間でどう移すか</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Offload mode of the text encoders</source>
        <translation>テキストエンコーダのオフロード方式</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Offload mode of the UNet</source>
        <translation>UNet のオフロード方式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Offload mode of the VAE</source>
        <translation>VAE のオフロード方式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Blocks moved together in group-block mode</source>
        <translation>group-block 方式で一緒に移すブロック数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Prefetch the next group while the current one runs</source>
        <translation>現在のグループの実行中に次のグループを先読みする</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Record tensors on the side stream (needs streams)</source>
        <translation>サイドストリームでテンソルを記録する（ストリームが必要）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Offloaded weights in pinned host memory</source>
        <translation>オフロードした重みをピン留めしたホストメモリに置く</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Host memory pinning leaves free</source>
        <translation>ピン留めで残しておくホストメモリ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Components never offloaded</source>
        <translation>オフロードしないコンポーネント</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Components always offloaded</source>
        <translation>常にオフロードするコンポーネント</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE decode and encode in tiles</source>
        <translation>VAE のデコードとエンコードをタイルで行う</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>VAE tile size in pixels (0: the largest that fits)</source>
        <translation>VAE のタイルサイズ（ピクセル、0：収まる最大）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Overlap of VAE tiles in pixels</source>
        <translation>VAE タイルの重なり（ピクセル）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Device memory kept free for work beside the weights</source>
        <translation>重みとは別に作業用に空けておくデバイスメモリ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>How LoRAs reach the weights</source>
        <translation>LoRA を重みに適用する方法</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Language of the interface (takes effect when Kiln starts)</source>
        <translation>表示言語</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Colour theme</source>
        <translation>配色テーマ</translation>
    </message>
</context>
<context>
    <name>kiln::app::EngineBridge</name>
    <message>
        <location filename="../app/bridge/engine_bridge.cpp" line="+109"/>
        <source>There is no image to save yet.</source>
        <translation>保存する画像はまだありません。</translation>
    </message>
</context>
<context>
    <name>kiln::app::Settings</name>
    <message>
        <location filename="../app/settings/settings.cpp" line="+20"/>
        <source>%1 must be true or false</source>
        <translation>%1 は true か false でなければなりません</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 must be a whole number, not &apos;%2&apos;</source>
        <translation>%1 は整数でなければなりません（&apos;%2&apos; ではなく）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 must be between %2 and %3, not %4</source>
        <translation>%1 は %2 から %3 の間でなければなりません（%4 ではなく）</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 must be a size like 2G or 512MiB, not &apos;%2&apos;</source>
        <translation>%1 は 2G や 512MiB のようなサイズでなければなりません（&apos;%2&apos; ではなく）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 must be between %2 and %3</source>
        <translation>%1 は %2 から %3 の間でなければなりません</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 must be one of %2, not &apos;%3&apos;</source>
        <translation>%1 は %2 のいずれかでなければなりません（&apos;%3&apos; ではなく）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 must be cpu, cuda:N or sim:SIZE, not &apos;%2&apos;</source>
        <translation>%1 は cpu、cuda:N、sim:SIZE のいずれかでなければなりません（&apos;%2&apos; ではなく）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 must be a list of names</source>
        <translation>%1 は名前のリストでなければなりません</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 has an unknown type</source>
        <translation>%1 の型が不明です</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Kiln has no setting %1</source>
        <translation>設定 %1 はありません</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MainWindow</name>
    <message>
        <location filename="../ui/main_window.cpp" line="+38"/>
        <source>Kiln</source>
        <translation>Kiln</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>A .safetensors checkpoint or a diffusers folder</source>
        <translation>.safetensors チェックポイントまたは diffusers フォルダ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Browse…</source>
        <translation>参照…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Model</source>
        <translation>モデル</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>What to render</source>
        <translation>描きたいもの</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>What to avoid</source>
        <translation>避けたいもの</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Prompt</source>
        <translation>プロンプト</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Negative prompt</source>
        <translation>ネガティブプロンプト</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Model&apos;s native size</source>
        <translation>モデル本来のサイズ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>0: the size the model was trained at</source>
        <translation>0：モデルの学習時のサイズ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Seed</source>
        <translation>シード</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Steps</source>
        <translation>ステップ数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CFG scale</source>
        <translation>CFG スケール</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Width</source>
        <translation>幅</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Height</source>
        <translation>高さ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Generate</source>
        <translation>生成</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Render with these settings (Ctrl+Enter)</source>
        <translation>この設定で生成する（Ctrl+Enter）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save As…</source>
        <translation>名前を付けて保存…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Interrupt the render (Esc)</source>
        <translation>生成を中断する（Esc）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Idle</source>
        <translation>待機中</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Memory settings ignored: %1</source>
        <translation>メモリ設定を無視しました：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Edit</source>
        <translation>編集(&amp;E)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Preferences…</source>
        <translation>設定(&amp;P)…</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>The starter model is missing (%1). Choose a model.</source>
        <translation>スターターモデルが見つかりません（%1）。モデルを選んでください。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Open checkpoint</source>
        <translation>チェックポイントを開く</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoints (*.safetensors)</source>
        <translation>チェックポイント (*.safetensors)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Choose a model first: a .safetensors checkpoint or a diffusers folder.</source>
        <translation>先にモデルを選んでください：.safetensors チェックポイントまたは diffusers フォルダ。</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Set both width and height, or both to the model&apos;s native size.</source>
        <translation>幅と高さを両方とも指定するか、両方ともモデル本来のサイズにしてください。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Starting…</source>
        <translation>開始中…</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Save image</source>
        <translation>画像を保存</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>PNG images (*.png)</source>
        <translation>PNG 画像 (*.png)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Saving failed</source>
        <translation>保存に失敗しました</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 %2/%3 %4</source>
        <translation>%1 %2/%3 %4</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> · %1%</source>
        <translation> · %1%</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> · about %1 s left</source>
        <translation> · 残り約 %1 秒</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Done</source>
        <translation>完了</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Done. Note: %1</source>
        <translation>完了。注意：%1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Failed: %1</source>
        <translation>失敗：%1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Stopped</source>
        <translation>停止しました</translation>
    </message>
</context>
<context>
    <name>kiln::ui::PreferencesDialog</name>
    <message>
        <location filename="../ui/preferences_dialog.cpp" line="+12"/>
        <source>Preferences</source>
        <translation>設定</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>General</source>
        <translation>一般</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory</source>
        <translation>メモリ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Appearance</source>
        <translation>外観</translation>
    </message>
    <message>
        <location line="+63"/>
        <source>Record stream needs streams: turn on streams or turn off record stream</source>
        <translation>レコードストリームにはストリームが必要です：ストリームをオンにするか、レコードストリームをオフにしてください</translation>
    </message>
</context>
<context>
    <name>kiln::ui::StageProgressBar</name>
    <message>
        <location filename="../ui/stage_progress_bar.cpp" line="+17"/>
        <source>Progress</source>
        <translation>進行状況</translation>
    </message>
    <message>
        <location line="+71"/>
        <source>%1 %2/%3 %4</source>
        <translation>%1 %2/%3 %4</translation>
    </message>
</context>
</TS>
